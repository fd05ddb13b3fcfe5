// The shim's reader of /proc stat files (ompi-overlay/.../
// comm_ft_detector_proc_stat.c), which the witness and the lifelines judge
// processes by, on real processes: a live one, one whose name holds
// spaces and parentheses, one killed and not yet reaped, one reaped, the
// signals pending for one thread, one killed and not yet run, and one
// whose leading thread exited;
// and threads found by name, their CPU time, one denied the CPU, and a
// look at one: ran, starved (also when it never ran), missing.
#include <gtest/gtest.h>

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <thread>

extern "C" {
#include "comm_ft_detector_proc_stat.h"
}

#include "cpu0_hog.hpp"

namespace {

std::string stat_path(pid_t pid)
{
    return "/proc/" + std::to_string(pid) + "/stat";
}

// field 22 the plain way, to compare with
uint64_t start_time_of(pid_t pid)
{
    std::ifstream in(stat_path(pid));
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::istringstream fields(text.substr(text.rfind(')') + 2));
    std::string field;
    for (int number = 3; number <= 22 && fields >> field; ++number) {
    }
    return std::stoull(field);
}

// a child that names itself `name` and waits for its end
pid_t start_child(const char *name, int ready[2])
{
    pid_t pid = fork();
    if (0 == pid) {
        prctl(PR_SET_NAME, name);
        char byte = 1;
        if (1 != write(ready[1], &byte, 1)) _exit(1);
        pause();
        _exit(0);
    }
    char byte;
    EXPECT_EQ(1, read(ready[0], &byte, 1));
    return pid;
}

// the same, with SIGUSR1 blocked in the child (it inherits the mask)
pid_t start_child_blocking_usr1(const char *name, int ready[2])
{
    sigset_t usr1, before;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    EXPECT_EQ(0, sigprocmask(SIG_BLOCK, &usr1, &before));
    const pid_t pid = start_child(name, ready);
    EXPECT_EQ(0, sigprocmask(SIG_SETMASK, &before, nullptr));
    return pid;
}

TEST(ProcStat, ReadsALiveProcess)
{
    ompi_comm_ft_proc_stat_t fields;
    ASSERT_EQ(OMPI_COMM_FT_PROC_STAT_READ, ompi_comm_ft_proc_stat_read("/proc/self/stat", &fields));
    EXPECT_EQ('R', fields.state);
    EXPECT_EQ(start_time_of(getpid()), fields.start_time);
    EXPECT_EQ(0u, fields.exit_code);
}

TEST(ProcStat, NameWithSpacesAndParenthesesAndAKill)
{
    int ready[2];
    ASSERT_EQ(0, pipe(ready));
    // a name that a parser stopping at the first ')' would take for state R
    pid_t pid = start_child("a) R 1 (b", ready);
    ompi_comm_ft_proc_stat_t fields;
    // asleep in pause() soon after it wrote (bounded: a hang is a failure)
    for (int tries = 0; tries < 10000; ++tries) {
        ASSERT_EQ(OMPI_COMM_FT_PROC_STAT_READ,
                  ompi_comm_ft_proc_stat_read(stat_path(pid).c_str(), &fields));
        if ('S' == fields.state) break;
        usleep(1000);
    }
    EXPECT_EQ('S', fields.state);
    EXPECT_EQ(start_time_of(pid), fields.start_time);
    EXPECT_EQ(0u, fields.exit_code);

    // killed, not reaped: a zombie whose exit code holds the signal
    ASSERT_EQ(0, kill(pid, SIGKILL));
    siginfo_t info{};
    ASSERT_EQ(0, waitid(P_PID, pid, &info, WEXITED | WNOWAIT));
    ASSERT_EQ(OMPI_COMM_FT_PROC_STAT_READ, ompi_comm_ft_proc_stat_read(stat_path(pid).c_str(), &fields));
    EXPECT_EQ('Z', fields.state);
    EXPECT_EQ(uint64_t{SIGKILL}, fields.exit_code & 0x7f);

    // reaped: gone, not unreadable
    ASSERT_EQ(pid, waitpid(pid, nullptr, 0));
    EXPECT_EQ(OMPI_COMM_FT_PROC_STAT_GONE, ompi_comm_ft_proc_stat_read(stat_path(pid).c_str(), &fields));
    close(ready[0]);
    close(ready[1]);
}

TEST(ProcStat, SignalsPendingForAThread)
{
    int ready[2];
    ASSERT_EQ(0, pipe(ready));
    pid_t pid = start_child_blocking_usr1("blocks usr1", ready);
    std::string thread = "/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/stat";
    const uint64_t usr1_bit = uint64_t{1} << (SIGUSR1 - 1);
    ompi_comm_ft_proc_stat_t fields;
    ASSERT_EQ(OMPI_COMM_FT_PROC_STAT_READ, ompi_comm_ft_proc_stat_read(thread.c_str(), &fields));
    EXPECT_EQ(0u, fields.pending & usr1_bit);
    EXPECT_EQ(0u, fields.flags & OMPI_COMM_FT_PROC_EXITING);
    // queued to that thread alone, and blocked there: it stays pending
    ASSERT_EQ(0, syscall(SYS_tgkill, pid, pid, SIGUSR1));
    ASSERT_EQ(OMPI_COMM_FT_PROC_STAT_READ, ompi_comm_ft_proc_stat_read(thread.c_str(), &fields));
    EXPECT_EQ(usr1_bit, fields.pending & usr1_bit);
    EXPECT_EQ(0u, fields.flags & OMPI_COMM_FT_PROC_EXITING);
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    close(ready[0]);
    close(ready[1]);
}

// A process whose leading thread left by pthread_exit() shows 'Z' while
// its other threads run: it has not ended (the witness and the node watch
// used to take it for gone, and so for crashed). Killed and not reaped, it
// has.
TEST(ProcStat, AnExitedLeaderWithAThreadLeftIsNoEnd)
{
    int ready[2];
    ASSERT_EQ(0, pipe(ready));
    pid_t pid = fork();
    if (0 == pid) {
        pthread_t thread;
        if (0 != pthread_create(&thread, nullptr, [](void *fd) -> void * {
                char byte = 1;
                if (1 != write(*static_cast<int *>(fd), &byte, 1)) _exit(1);
                for (;;) pause();
            }, &ready[1])) {
            _exit(1);
        }
        // the leading thread alone exits, as pthread_exit() ends it, but
        // without unwinding through the test framework's catch(...)
        syscall(SYS_exit, 0);
    }
    close(ready[1]);  // a child that dies before it writes ends the read
    char byte;
    if (1 != read(ready[0], &byte, 1)) {
        int status = 0;
        waitpid(pid, &status, 0);
        FAIL() << "the child ended before its thread ran, status " << status;
    }
    ompi_comm_ft_proc_stat_t fields{};
    // the leader's exit follows its pthread_create (bounded: a hang is a failure)
    for (int tries = 0; tries < 10000 && 'Z' != fields.state; ++tries) {
        ASSERT_EQ(OMPI_COMM_FT_PROC_STAT_READ, ompi_comm_ft_proc_stat_read(stat_path(pid).c_str(), &fields));
        usleep(1000);
    }
    EXPECT_EQ('Z', fields.state);
    EXPECT_EQ(2u, fields.threads);
    EXPECT_FALSE(ompi_comm_ft_proc_stat_ended(&fields));

    ASSERT_EQ(0, kill(pid, SIGKILL));
    siginfo_t info{};
    ASSERT_EQ(0, waitid(P_PID, pid, &info, WEXITED | WNOWAIT));
    ASSERT_EQ(OMPI_COMM_FT_PROC_STAT_READ, ompi_comm_ft_proc_stat_read(stat_path(pid).c_str(), &fields));
    EXPECT_EQ('Z', fields.state);
    EXPECT_EQ(1u, fields.threads);
    EXPECT_TRUE(ompi_comm_ft_proc_stat_ended(&fields));
    ASSERT_EQ(pid, waitpid(pid, nullptr, 0));
    close(ready[0]);
}

// A thread of this process, named, that sleeps or spins until told to stop.
struct named_thread {
    named_thread(const char *name, bool spins) : spin(spins)
    {
        EXPECT_EQ(0, pthread_create(&thread, nullptr, [](void *self) -> void * {
                      auto *me = static_cast<named_thread *>(self);
                      me->tid.store(static_cast<pid_t>(syscall(SYS_gettid)));
                      while (!me->stop.load()) {
                          if (!me->spin) usleep(1000);
                      }
                      return nullptr;
                  }, this));
        EXPECT_EQ(0, pthread_setname_np(thread, name));
        while (0 == tid.load()) usleep(100);
    }
    ~named_thread()
    {
        stop.store(true);
        pthread_join(thread, nullptr);
    }
    std::string path(const char *file) const
    {
        return "/proc/self/task/" + std::to_string(tid.load()) + "/" + file;
    }
    // whether its CPU time grows within 2 s
    bool gains_run_time() const
    {
        const uint64_t start = run_ns();
        for (int tries = 0; tries < 200; ++tries) {
            usleep(10000);
            if (run_ns() > start) return true;
        }
        return false;
    }
    uint64_t run_ns() const
    {
        uint64_t ns = 0;
        EXPECT_EQ(OMPI_COMM_FT_PROC_STAT_READ, ompi_comm_ft_proc_stat_run_time(path("schedstat").c_str(), &ns));
        return ns;
    }
    bool spin;
    pthread_t thread{};
    std::atomic<pid_t> tid{0};
    std::atomic<bool> stop{false};
};

// The witness finds a process's detector thread by its name, and judges
// it by its CPU time.
TEST(ProcStat, FindsAThreadByNameAndReadsItsRunTime)
{
    named_thread sleeper("ft sleeper", false), spinner("ft spinner", true);
    int32_t tid = 0;
    ASSERT_TRUE(ompi_comm_ft_proc_stat_find_thread(getpid(), "ft sleeper", &tid));
    EXPECT_EQ(sleeper.tid.load(), tid);
    ASSERT_TRUE(ompi_comm_ft_proc_stat_find_thread(getpid(), "ft spinner", &tid));
    EXPECT_EQ(spinner.tid.load(), tid);
    EXPECT_FALSE(ompi_comm_ft_proc_stat_find_thread(getpid(), "ft spin", &tid));  // names match whole
    EXPECT_FALSE(ompi_comm_ft_proc_stat_find_thread(getpid(), "nobody", &tid));
    EXPECT_FALSE(ompi_comm_ft_proc_stat_find_thread(0, "ft sleeper", &tid));

    EXPECT_TRUE(spinner.gains_run_time());
    uint64_t ns = 0;
    EXPECT_EQ(OMPI_COMM_FT_PROC_STAT_GONE, ompi_comm_ft_proc_stat_run_time("/proc/self/task/0/schedstat", &ns));
    EXPECT_EQ(OMPI_COMM_FT_PROC_STAT_UNREADABLE, ompi_comm_ft_proc_stat_run_time("/proc/self/task", &ns));
}

// What the witness's `starved` rests on: a thread that the kernel keeps
// off the CPU shows R, and its CPU time does not grow. Here a SCHED_FIFO
// thread holds the one CPU both are pinned to for up to 200 ms. The
// kernel may still lend a starved thread a share (since Linux 6.12 its
// fair server gives such threads up to 50 ms a second, in one piece when
// they have waited long, as after other tests' hogs), so the victim is
// read every 5 ms for 100 ms: some span must show it runnable with no CPU
// time gained, as the witness's questions would. Skipped without the
// right to real-time scheduling, or with one CPU (the test's own thread
// must run).
TEST(ProcStat, AThreadDeniedTheCpuIsRunnableAndGainsNoRunTime)
{
    if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "one CPU";
    named_thread victim("ft victim", true);
    const cpu_set_t first = cpu0();
    ASSERT_EQ(0, sched_setaffinity(victim.tid.load(), sizeof(first), &first));
    cpu0_hog hog;
    if (!hog.holding()) GTEST_SKIP() << "no real-time scheduling here";
    usleep(20000);  // the hog has the CPU: the victim waits on it
    int starved_spans = 0;
    uint64_t before = victim.run_ns();
    for (int span = 0; span < 20; ++span) {
        usleep(5000);
        ompi_comm_ft_proc_stat_t fields{};
        const bool read = OMPI_COMM_FT_PROC_STAT_READ
                          == ompi_comm_ft_proc_stat_read(victim.path("stat").c_str(), &fields);
        const uint64_t after = victim.run_ns();
        starved_spans += read && 'R' == fields.state && after == before ? 1 : 0;
        before = after;
    }
    const bool hog_held = hog.holding();
    hog.release();
    EXPECT_TRUE(hog_held);
    EXPECT_GT(starved_spans, 0) << "the victim ran in every 5 ms while the hog held its CPU";
    EXPECT_TRUE(victim.gains_run_time()) << "released, it did not run again";
}

// A look at a named thread: asleep or gaining CPU time it ran, looked for
// by a name no thread has it is missing, and once it has exited it is
// missing again, to be looked for afresh.
TEST(ProcStat, ALookAtAThreadSaysWhetherItRan)
{
    ompi_comm_ft_thread_look_t look{};
    EXPECT_EQ(OMPI_COMM_FT_THREAD_MISSING, ompi_comm_ft_proc_stat_look_at_thread(getpid(), "nobody", &look));
    EXPECT_EQ(0, look.tid);
    {
        named_thread sleeper("ft sleeper", false);
        EXPECT_EQ(OMPI_COMM_FT_THREAD_RAN,
                  ompi_comm_ft_proc_stat_look_at_thread(getpid(), "ft sleeper", &look));
        EXPECT_EQ(sleeper.tid.load(), look.tid);
        EXPECT_TRUE(look.looked);
        EXPECT_EQ(OMPI_COMM_FT_THREAD_RAN,
                  ompi_comm_ft_proc_stat_look_at_thread(getpid(), "ft sleeper", &look));
    }
    EXPECT_EQ(OMPI_COMM_FT_THREAD_MISSING, ompi_comm_ft_proc_stat_look_at_thread(getpid(), "ft sleeper", &look));
    EXPECT_EQ(0, look.tid);
    EXPECT_FALSE(look.looked);
}

// A thread made while its only CPU is held has never run: starved at the
// first look, with no look before to compare with (a witness's first
// question about a detector thread the kernel had not run for a second,
// in a double-load stress). Its maker names it, as the driver does, so it
// is found before it runs. Looked at again once released, it ran. Skipped
// as the test above is.
TEST(ProcStat, AThreadThatNeverRanIsStarvedAtTheFirstLook)
{
    if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "one CPU";
    cpu0_hog hog;
    if (!hog.holding()) GTEST_SKIP() << "no real-time scheduling here";
    const cpu_set_t first = cpu0();
    pthread_attr_t attr;
    ASSERT_EQ(0, pthread_attr_init(&attr));
    ASSERT_EQ(0, pthread_attr_setaffinity_np(&attr, sizeof(first), &first));
    static std::atomic<bool> ran, stop;
    ran.store(false);
    stop.store(false);
    pthread_t thread;
    ASSERT_EQ(0, pthread_create(&thread, &attr, [](void *) -> void * {
                  ran.store(true);
                  while (!stop.load()) usleep(1000);
                  return nullptr;
              }, nullptr));
    pthread_attr_destroy(&attr);
    EXPECT_EQ(0, pthread_setname_np(thread, "ft newborn"));
    ompi_comm_ft_thread_look_t look{};
    const ompi_comm_ft_thread_seen_t seen = ompi_comm_ft_proc_stat_look_at_thread(getpid(), "ft newborn", &look);
    const bool ran_before_the_look = ran.load();
    const bool hog_held = hog.holding();
    hog.release();
    EXPECT_TRUE(hog_held);
    EXPECT_FALSE(ran_before_the_look) << "the hog did not keep the new thread off its CPU";
    EXPECT_EQ(OMPI_COMM_FT_THREAD_STARVED, seen);
    EXPECT_EQ(0u, look.run_ns);
    for (int tries = 0; tries < 200 && !ran.load(); ++tries) usleep(1000);
    EXPECT_TRUE(ran.load()) << "released, it never ran";
    EXPECT_EQ(OMPI_COMM_FT_THREAD_RAN, ompi_comm_ft_proc_stat_look_at_thread(getpid(), "ft newborn", &look));
    EXPECT_LT(0u, look.run_ns);
    stop.store(true);
    pthread_join(thread, nullptr);
}

// What the node watch passes a killed node-mate by: a SIGKILL sent to
// the process waits in its shared pending set until its threads get a
// CPU to take it, and /proc/<pid>/stat still shows it alive. Here the
// child is pinned to CPU 0 while a SCHED_FIFO thread holds that CPU, so
// it cannot take the signal until released. Another signal sent to the
// whole process, and pending there, is no kill. Skipped as the test
// above is.
TEST(ProcStat, AProcessKilledAndNotYetRunIsKilled)
{
    if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "one CPU";
    const cpu_set_t first = cpu0();
    int ready[2];
    ASSERT_EQ(0, pipe(ready));
    pid_t pid = start_child_blocking_usr1("ft killed", ready);
    ASSERT_EQ(0, sched_setaffinity(pid, sizeof(first), &first));
    EXPECT_FALSE(ompi_comm_ft_proc_stat_killed(static_cast<uint64_t>(pid)));
    ASSERT_EQ(0, kill(pid, SIGUSR1));  // blocked: it stays in the shared set
    EXPECT_FALSE(ompi_comm_ft_proc_stat_killed(static_cast<uint64_t>(pid)));
    cpu0_hog hog;
    ASSERT_EQ(0, kill(pid, SIGKILL));
    if (!hog.holding()) {
        waitpid(pid, nullptr, 0);
        GTEST_SKIP() << "no real-time scheduling here";
    }
    ompi_comm_ft_proc_stat_t fields;
    const auto read = ompi_comm_ft_proc_stat_read(stat_path(pid).c_str(), &fields);
    const bool killed = ompi_comm_ft_proc_stat_killed(static_cast<uint64_t>(pid));
    const bool hog_held = hog.holding();
    hog.release();
    ASSERT_EQ(OMPI_COMM_FT_PROC_STAT_READ, read);
    EXPECT_TRUE(hog_held);
    EXPECT_FALSE(ompi_comm_ft_proc_stat_ended(&fields)) << "it ended while the hog held its CPU";
    EXPECT_TRUE(killed);
    ASSERT_EQ(pid, waitpid(pid, nullptr, 0));
    EXPECT_FALSE(ompi_comm_ft_proc_stat_killed(static_cast<uint64_t>(pid)));  // reaped: no file
    close(ready[0]);
    close(ready[1]);
}

TEST(ProcStat, WhatIsNotAStatFileIsUnreadable)
{
    ompi_comm_ft_proc_stat_t fields;
    // there, but not a file
    EXPECT_EQ(OMPI_COMM_FT_PROC_STAT_UNREADABLE, ompi_comm_ft_proc_stat_read("/proc/self", &fields));
    // a file with too few fields, or none after the name
    char path[] = "/tmp/test_proc_stat_XXXXXX";
    int fd = mkstemp(path);
    ASSERT_LE(0, fd);
    const char shortened[] = "1 (x) S 0 1 1 0 -1 4194560 100 0 0 0 0 0 0 0 20 0 1 0\n";
    ASSERT_EQ(ssize_t(sizeof shortened - 1), write(fd, shortened, sizeof shortened - 1));
    close(fd);
    EXPECT_EQ(OMPI_COMM_FT_PROC_STAT_UNREADABLE, ompi_comm_ft_proc_stat_read(path, &fields));
    FILE *nameless = fopen(path, "w");
    ASSERT_NE(nullptr, nameless);
    fputs("1 x S 0\n", nameless);
    fclose(nameless);
    EXPECT_EQ(OMPI_COMM_FT_PROC_STAT_UNREADABLE, ompi_comm_ft_proc_stat_read(path, &fields));
    unlink(path);
}

}  // namespace
