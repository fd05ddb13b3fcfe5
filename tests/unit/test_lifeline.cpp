// The shim's lifelines (ompi-overlay/.../comm_ft_detector_lifeline.c), with
// real processes and real signals: a holder killed by a signal, or one
// with a last thread that exits, is known before the kernel has freed its
// memory (its pidfd not yet readable) and makes way (its threads left are
// SCHED_IDLE), one killed as a whole makes way even before its cut, and
// nothing else that cuts a lifeline (an exit without a last thread, a
// holder thread that returns, an exec, letting go) is taken for a death.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

extern "C" {
#include "comm_ft_detector_lifeline.h"
#include "comm_ft_detector_proc_stat.h"
}

#include "cpu0_hog.hpp"

namespace {

constexpr int kBoundMs = 10000;  // a wait that must end: a hang is a failure
// How long a write that must not come is waited for. The follower writes
// within a millisecond of a cut (and the tests below check it does).
constexpr int kQuietMs = 300;
// Freed by the kernel in about 70 ms here: the lifeline must tell first.
constexpr size_t kLargeBytes = size_t{1} << 30;

enum class Holder { Main, ThreadThatReturns };
// what the holder does on go(): its main thread only
enum class OnGo { Nothing, LetGo, Exit, Exec };

bool readable(int fd, int timeout_ms)
{
    pollfd entry{fd, POLLIN, 0};
    return 1 == poll(&entry, 1, timeout_ms) && (entry.revents & POLLIN);
}

// as the shim reads it (test_proc_stat.cpp checks that reader)
uint64_t start_time_of(pid_t pid)
{
    ompi_comm_ft_proc_stat_t fields{};
    std::string path = "/proc/" + std::to_string(pid) + "/stat";
    EXPECT_EQ(OMPI_COMM_FT_PROC_STAT_READ, ompi_comm_ft_proc_stat_read(path.c_str(), &fields));
    return fields.start_time;
}

// Whether every thread process `pid` has left runs under `policy` (false
// when none is left to see).
bool threads_run_under(pid_t pid, int policy)
{
    DIR *tasks = opendir(("/proc/" + std::to_string(pid) + "/task").c_str());
    int seen = 0, under = 0;
    for (dirent *entry; tasks && (entry = readdir(tasks));) {
        pid_t tid = static_cast<pid_t>(std::strtol(entry->d_name, nullptr, 10));
        if (0 < tid) {
            ++seen;
            under += policy == sched_getscheduler(tid);
        }
    }
    if (tasks) {
        closedir(tasks);
    }
    return 0 < seen && seen == under;
}

// The policy of the thread of process `pid` named `name`; -1 when none is.
int policy_of_thread(pid_t pid, const std::string &name)
{
    std::string tasks = "/proc/" + std::to_string(pid) + "/task";
    DIR *dir = opendir(tasks.c_str());
    int policy = -1;
    for (dirent *entry; dir && (entry = readdir(dir));) {
        std::string comm;
        std::getline(std::ifstream(tasks + "/" + entry->d_name + "/comm"), comm);
        if (comm == name) {
            policy = sched_getscheduler(static_cast<pid_t>(std::strtol(entry->d_name, nullptr, 10)));
        }
    }
    if (dir) {
        closedir(dir);
    }
    return policy;
}

void touch(size_t bytes)
{
    if (0 == bytes) {
        return;
    }
    void *memory = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (MAP_FAILED == memory) {
        _exit(3);
    }
    madvise(memory, bytes, MADV_NOHUGEPAGE);  // pages the kernel frees one by one, as an MPI rank's
    memset(memory, 1, bytes);
}

struct ThreadArgs {
    int fd;
    int go;
};

void *hold_then_return(void *raw)
{
    auto *args = static_cast<ThreadArgs *>(raw);
    char byte = 0;
    if (!ompi_comm_ft_lifeline_hold(args->fd)) {
        _exit(4);
    }
    (void) !read(args->go, &byte, 1);
    return nullptr;
}

// A process holding a lifeline in a file of its own, with the last thread
// a followed holder keeps if `last_thread`. It says when it holds it; a
// byte sent on `go` makes it take its step (OnGo). It is killed when the
// test ends.
class HolderProcess {
public:
    HolderProcess(Holder holder, size_t bytes, OnGo on_go = OnGo::Nothing, bool last_thread = false)
    {
        char name[] = "/tmp/btl_ft_lifeline_XXXXXX";
        int fd = mkstemp(name), ready[2], go[2];
        path_ = name;
        if (0 > fd || 0 != pipe(ready) || 0 != pipe(go)) {
            ADD_FAILURE() << "cannot make the holder's file or pipes";
            return;
        }
        pid_ = fork();
        if (0 == pid_) {
            char byte = 0;
            close(ready[0]);
            close(go[1]);
            if (Holder::Main == holder) {
                if (!ompi_comm_ft_lifeline_hold(fd)) {
                    _exit(2);
                }
            } else {
                static ThreadArgs args;
                pthread_t thread;
                args = {fd, go[0]};
                if (0 != pthread_create(&thread, nullptr, hold_then_return, &args)) {
                    _exit(2);
                }
                usleep(100000);  // it holds before the parent follows
            }
            if (last_thread) {
                ompi_comm_ft_lifeline_keep_last_thread();
            }
            touch(bytes);
            (void) !write(ready[1], "r", 1);
            if (Holder::Main == holder && 1 == read(go[0], &byte, 1)) {
                if (OnGo::LetGo == on_go) {
                    ompi_comm_ft_lifeline_let_go();
                } else if (OnGo::Exit == on_go) {
                    _exit(0);
                } else if (OnGo::Exec == on_go) {
                    execl("/bin/sleep", "sleep", "60", static_cast<char *>(nullptr));
                    _exit(5);
                }
            }
            for (;;) {
                pause();
            }
        }
        close(fd);
        close(ready[1]);
        close(go[0]);
        go_ = go[1];
        char byte = 0;
        pollfd entry{ready[0], POLLIN, 0};
        EXPECT_TRUE(1 == poll(&entry, 1, kBoundMs) && 1 == read(ready[0], &byte, 1))
            << "the holder never said it holds its lifeline";
        close(ready[0]);
        pidfd_ = static_cast<int>(syscall(SYS_pidfd_open, pid_, 0));
        start_time_ = start_time_of(pid_);
    }
    ~HolderProcess()
    {
        if (0 < pid_) {
            kill(pid_, SIGKILL);
            waitpid(pid_, nullptr, 0);
        }
        close(pidfd_);
        close(go_);
        unlink(path_.c_str());
    }
    int follow() const { return ompi_comm_ft_lifeline_follow(path_.c_str(), pid_, start_time_); }
    bool make_way() const { return ompi_comm_ft_lifeline_make_way(path_.c_str(), pid_, start_time_); }
    int pin(const cpu_set_t &cpus) const { return sched_setaffinity(pid_, sizeof(cpus), &cpus); }
    bool threads_under(int policy) const { return threads_run_under(pid_, policy); }
    int last_thread_policy() const { return policy_of_thread(pid_, "btl_ft teardown"); }
    void go() const { EXPECT_EQ(1, write(go_, "g", 1)); }
    void kill_it() const { EXPECT_EQ(0, kill(pid_, SIGKILL)); }
    // whether the kernel has ended the process (freed its memory)
    bool ended(int timeout_ms = 0) const { return readable(pidfd_, timeout_ms); }

private:
    std::string path_;
    pid_t pid_ = -1;
    int pidfd_ = -1;
    int go_ = -1;
    uint64_t start_time_ = 0;
};

class Lifeline : public ::testing::Test {
protected:
    void TearDown() override { ompi_comm_ft_lifeline_finalize(); }
};

TEST_F(Lifeline, AHolderKilledIsKnownBeforeItsMemoryIsFreed)
{
    for (bool last_thread : {false, true}) {
        SCOPED_TRACE(last_thread ? "with a last thread" : "without a last thread");
        HolderProcess holder(Holder::Main, kLargeBytes, OnGo::Nothing, last_thread);
        int fd = holder.follow();
        ASSERT_LE(0, fd) << "no lifeline followed: futex_waitv refused?";
        usleep(50000);  // the follower sleeps on the lock
        holder.kill_it();
        ASSERT_TRUE(readable(fd, kBoundMs)) << "the cut of a killed holder was never told";
        EXPECT_FALSE(holder.ended()) << "told only after the process had ended: no earlier than its pidfd";
        EXPECT_TRUE(holder.threads_under(SCHED_IDLE)) << "the dying process did not make way";
        EXPECT_TRUE(holder.ended(kBoundMs));
    }
}

TEST_F(Lifeline, OneFoundDyingMakesWayAndTheLivingDoNot)
{
    HolderProcess living(Holder::Main, 0), dying(Holder::Main, kLargeBytes);
    EXPECT_FALSE(living.make_way());
    EXPECT_TRUE(living.threads_under(SCHED_OTHER));
    dying.kill_it();
    bool made_way = false;
    for (int ms = 0; ms < kBoundMs && !made_way && !dying.ended(); ++ms) {
        made_way = dying.make_way();  // once the kernel has cut its lifeline
        usleep(made_way ? 0 : 1000);
    }
    ASSERT_TRUE(made_way) << "never found dying before it ended";
    EXPECT_TRUE(dying.threads_under(SCHED_IDLE));
}

// Killed as a whole, a holder is dying before its lifeline is cut: pinned
// to the CPU a SCHED_FIFO thread holds, it cannot take the signal, and it
// makes way all the same (the node watch passes it by as ended).
TEST_F(Lifeline, OneKilledMakesWayBeforeItIsCut)
{
    if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "one CPU";
    HolderProcess holder(Holder::Main, 0);
    ASSERT_EQ(0, holder.pin(cpu0()));
    cpu0_hog hog;
    if (!hog.holding()) GTEST_SKIP() << "no real-time scheduling here";
    holder.kill_it();
    const bool made_way = holder.make_way();
    const bool idle = holder.threads_under(SCHED_IDLE);
    const bool ended = holder.ended();
    const bool hog_held = hog.holding();
    hog.release();
    EXPECT_TRUE(hog_held);
    EXPECT_FALSE(ended) << "it ended while the hog held its CPU";
    EXPECT_TRUE(made_way) << "killed as a whole, it was not found dying before its cut";
    EXPECT_TRUE(idle);
    EXPECT_TRUE(holder.ended(kBoundMs));
}

TEST_F(Lifeline, OneCutBeforeItIsFollowedIsToldAtOnce)
{
    HolderProcess holder(Holder::Main, kLargeBytes);
    holder.kill_it();
    int fd = holder.follow();
    ASSERT_LE(0, fd);
    ASSERT_TRUE(readable(fd, kBoundMs));
    EXPECT_FALSE(holder.ended());
}

TEST_F(Lifeline, AFollowedHolderKeepsALastThreadAtIdlePriority)
{
    HolderProcess without(Holder::Main, 0), with(Holder::Main, 0, OnGo::Nothing, true);
    EXPECT_EQ(-1, without.last_thread_policy());
    EXPECT_EQ(SCHED_IDLE, with.last_thread_policy()) << "no last thread, or not at SCHED_IDLE";
    EXPECT_FALSE(with.threads_under(SCHED_IDLE)) << "the holder's other threads gave way";
}

TEST_F(Lifeline, AnExitWithALastThreadIsKnownBeforeItsMemoryIsFreed)
{
    HolderProcess holder(Holder::Main, kLargeBytes, OnGo::Exit, true);
    int fd = holder.follow();
    ASSERT_LE(0, fd);
    usleep(50000);
    holder.go();
    ASSERT_TRUE(readable(fd, kBoundMs)) << "exit(0) with a last thread was not told";
    EXPECT_FALSE(holder.ended()) << "told only after the process had ended: no earlier than its pidfd";
    EXPECT_TRUE(holder.threads_under(SCHED_IDLE)) << "the dying process did not make way";
    EXPECT_TRUE(holder.ended(kBoundMs));
}

TEST_F(Lifeline, AnExitWithoutALastThreadIsLeftToThePidfd)
{
    HolderProcess holder(Holder::Main, 0, OnGo::Exit);
    int fd = holder.follow();
    ASSERT_LE(0, fd);
    usleep(50000);
    holder.go();
    ASSERT_TRUE(holder.ended(kBoundMs));
    EXPECT_FALSE(readable(fd, kQuietMs)) << "exit(0) without a last thread was told as a death";
}

TEST_F(Lifeline, AHolderThreadThatReturnsIsNoDeath)
{
    for (bool last_thread : {false, true}) {
        SCOPED_TRACE(last_thread ? "with a last thread" : "without a last thread");
        HolderProcess holder(Holder::ThreadThatReturns, 0, OnGo::Nothing, last_thread);
        int fd = holder.follow();
        ASSERT_LE(0, fd);
        usleep(50000);
        holder.go();  // the holder thread returns; the process goes on
        EXPECT_FALSE(readable(fd, kQuietMs)) << "a thread's return was told as a death";
        EXPECT_FALSE(holder.ended());
        holder.kill_it();  // its lifeline was cut already: the pidfd tells
        ASSERT_TRUE(holder.ended(kBoundMs));
        EXPECT_FALSE(readable(fd, kQuietMs));
    }
}

TEST_F(Lifeline, AnExecIsNoDeath)
{
    HolderProcess holder(Holder::Main, 0, OnGo::Exec, true);
    int fd = holder.follow();
    ASSERT_LE(0, fd);
    usleep(50000);
    holder.go();  // the kernel cuts the lifeline and ends the last thread
    EXPECT_FALSE(readable(fd, kQuietMs)) << "an exec was told as a death";
    EXPECT_FALSE(holder.ended());
    EXPECT_TRUE(holder.threads_under(SCHED_OTHER)) << "the program it became was made to give way";
}

TEST_F(Lifeline, LettingGoIsNoDeath)
{
    HolderProcess holder(Holder::Main, 0, OnGo::LetGo);
    int fd = holder.follow();
    ASSERT_LE(0, fd);
    usleep(50000);
    holder.go();  // lets go, as MPI_Finalize does
    usleep(50000);
    holder.kill_it();
    ASSERT_TRUE(holder.ended(kBoundMs));
    EXPECT_FALSE(readable(fd, kQuietMs)) << "a death after letting go was told";
}

TEST_F(Lifeline, FollowingAnotherForgetsTheFirst)
{
    HolderProcess first(Holder::Main, 0), second(Holder::Main, 0);
    int first_fd = first.follow();
    int second_fd = second.follow();
    ASSERT_LE(0, first_fd);
    ASSERT_LE(0, second_fd);
    EXPECT_EQ(-1, fcntl(first_fd, F_GETFD)) << "the first descriptor is still open";
    usleep(50000);
    first.kill_it();
    ASSERT_TRUE(first.ended(kBoundMs));
    EXPECT_FALSE(readable(second_fd, kQuietMs)) << "the first's death was told as the second's";
    second.kill_it();
    EXPECT_TRUE(readable(second_fd, kBoundMs));
}

TEST_F(Lifeline, AFileWithoutALifelineIsNeverTold)
{
    char name[] = "/tmp/btl_ft_marker_XXXXXX";
    int file = mkstemp(name);
    ASSERT_LE(0, file);
    int fd = ompi_comm_ft_lifeline_follow(name, static_cast<uint64_t>(getpid()), start_time_of(getpid()));
    EXPECT_FALSE(0 <= fd && readable(fd, kQuietMs));
    ompi_comm_ft_lifeline_unfollow();
    EXPECT_EQ(-1, fcntl(fd, F_GETFD)) << "unfollow left the descriptor open";
    close(file);
    unlink(name);
}

}  // namespace
