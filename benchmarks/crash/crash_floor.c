/*
 * The floor under crash_notice (issue #18), without MPI: n processes on this
 * machine, each spinning with sched_yield() as an MPI rank blocked in a
 * barrier does when the node is oversubscribed, and each with a second
 * thread that waits on the last process's pidfd, the earliest notice of a
 * death a process of the same machine can get. The last process records the
 * time and SIGKILLs itself; each survivor's spinning thread records when it
 * sees the flag its watcher set. No runtime, no messages: what is left is
 * the kernel tearing the victim down and the scheduler handing every
 * survivor a CPU.
 *
 *   crash_floor N [TOUCH_MB]
 *
 * TOUCH_MB (default 0): memory each process writes before the kill, so that
 * the victim's teardown frees as much as an MPI rank's does. Prints one JSON
 * line: the n, and each survivor's ms from the kill, sorted.
 */
#define _GNU_SOURCE
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct shared_t {
    atomic_int ready;     /* processes at the start line */
    atomic_int watching;  /* survivors whose watcher holds the victim's pidfd */
    atomic_llong kill_ns; /* set by the victim just before its SIGKILL */
    long long seen_ns[];  /* per survivor: when its spinning thread saw the flag */
} shared_t;

static shared_t *shared;
static atomic_int crash_seen;
static pid_t victim_pid;

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long) ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void *watch_victim(void *arg)
{
    int pidfd = (int) syscall(SYS_pidfd_open, victim_pid, 0);
    struct pollfd pfd = {.fd = pidfd, .events = POLLIN};

    (void) arg;
    if (pidfd < 0) {
        perror("pidfd_open");
        exit(2);
    }
    atomic_fetch_add(&shared->watching, 1);
    while (poll(&pfd, 1, -1) < 1) {
    }
    atomic_store(&crash_seen, 1);
    return NULL;
}

static void touch(size_t mb)
{
    char *memory = mb ? malloc(mb << 20) : NULL;
    if (memory) {
        memset(memory, 1, mb << 20);
    }
}

static void survivor(int index, size_t touch_mb)
{
    pthread_t watcher;

    touch(touch_mb);
    pthread_create(&watcher, NULL, watch_victim, NULL);
    atomic_fetch_add(&shared->ready, 1);
    while (!atomic_load(&crash_seen)) {
        sched_yield();
    }
    shared->seen_ns[index] = now_ns();
    _exit(0);
}

static void victim(int n, size_t touch_mb)
{
    touch(touch_mb);
    atomic_fetch_add(&shared->ready, 1);
    while (atomic_load(&shared->ready) < n || atomic_load(&shared->watching) < n - 1) {
        sched_yield();
    }
    /* let every survivor settle into its spin loop */
    for (long long until = now_ns() + 20000000LL; now_ns() < until;) {
        sched_yield();
    }
    atomic_store(&shared->kill_ns, now_ns());
    kill(getpid(), SIGKILL);
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 8;
    size_t touch_mb = argc > 2 ? (size_t) atol(argv[2]) : 0;
    double ms[1024];

    if (n < 2 || n > 1024) {
        fprintf(stderr, "usage: crash_floor N [TOUCH_MB], 2 <= N <= 1024\n");
        return 2;
    }
    shared = mmap(NULL, sizeof(shared_t) + sizeof(long long) * (size_t) n, PROT_READ | PROT_WRITE,
                  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (MAP_FAILED == shared) {
        perror("mmap");
        return 2;
    }
    /* the victim first, so that every survivor knows its pid */
    victim_pid = fork();
    if (0 == victim_pid) {
        victim(n, touch_mb);
    }
    for (int i = 0; i < n - 1; ++i) {
        if (0 == fork()) {
            survivor(i, touch_mb);
        }
    }
    for (int i = 0; i < n; ++i) {
        wait(NULL);
    }
    printf("{\"benchmark\": \"crash_floor\", \"n\": %d, \"touch_mb\": %zu, \"survivor_ms\": [", n, touch_mb);
    for (int i = 0; i < n - 1; ++i) {
        ms[i] = (shared->seen_ns[i] - atomic_load(&shared->kill_ns)) / 1e6;
    }
    qsort(ms, (size_t) n - 1, sizeof ms[0], by_value);
    for (int i = 0; i < n - 1; ++i) {
        printf("%s%.3f", i ? ", " : "", ms[i]);
    }
    printf("]}\n");
    return 0;
}
