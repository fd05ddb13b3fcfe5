/*
 * What the detector costs an application that computes without MPI calls:
 * every rank computes for SECONDS, then rank 0 prints one JSON line per test.
 *
 *   idle_cost SECONDS [WAKE_PERIOD]
 *
 * With WAKE_PERIOD (seconds), a thread beside the application wakes that
 * often and does nothing else: run with the detector off, it measures what
 * a wakeup alone costs on this machine, the floor for a detector thread
 * that wakes as often.
 *
 * compute_rate       iterations per second of pure computation, mean over ranks
 *                    (the throughput a fully subscribed node keeps)
 * app_preemptions    involuntary context switches of the application thread, per s
 * thread_wakeups     voluntary context switches (sleeps, so wakeups) of every
 *                    other thread of the process (the detector's, PMIx's, Open
 *                    MPI's), per s: each wakeup takes the core from the application
 * thread_cpu         CPU time of those threads, in percent of the wall time
 * app_wait           time the application thread was runnable but waited for a
 *                    CPU (schedstat's run delay), in percent of the wall time:
 *                    what other threads of this machine took from it, which a
 *                    hypervisor's steal does not blur
 * rate_per_cpu       iterations per second of the application thread's own CPU
 *                    time: what is left of the throughput once the waits are
 *                    taken out (cache and TLB misses after another thread ran)
 *
 * The counts come from /proc/self/task/<tid>/status and .../schedstat, read
 * before and after the computation; they do not depend on the wall-clock
 * noise of a shared machine, which the compute rate does.
 */
#include <mpi.h>

#include <dirent.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 64
#define CHECK_EVERY (1u << 16)

typedef struct {
    long tid;
    double voluntary, involuntary, cpu_ns, wait_ns;
} thread_sample;

enum { RATE, PREEMPTIONS, WAKEUPS, CPU, WAIT, RATE_PER_CPU, MEASURES };

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* the context switch counts of one thread, from one read of its status */
static void read_switches(const char *path, thread_sample *s)
{
    static const char voluntary[] = "voluntary_ctxt_switches:";
    static const char involuntary[] = "nonvoluntary_ctxt_switches:";
    char line[256];
    FILE *file = fopen(path, "r");
    s->voluntary = s->involuntary = 0;
    if (file == NULL) return;
    while (fgets(line, sizeof line, file)) {
        if (strncmp(line, voluntary, sizeof voluntary - 1) == 0) s->voluntary = atof(line + sizeof voluntary - 1);
        if (strncmp(line, involuntary, sizeof involuntary - 1) == 0)
            s->involuntary = atof(line + sizeof involuntary - 1);
    }
    fclose(file);
}

static int sample_threads(thread_sample *out)
{
    char path[128];
    struct dirent *entry;
    int count = 0;
    DIR *dir = opendir("/proc/self/task");
    if (dir == NULL) return 0;
    while ((entry = readdir(dir)) != NULL && count < MAX_THREADS) {
        if (entry->d_name[0] == '.') continue;
        thread_sample *s = &out[count++];
        s->tid = atol(entry->d_name);
        snprintf(path, sizeof path, "/proc/self/task/%ld/status", s->tid);
        read_switches(path, s);
        snprintf(path, sizeof path, "/proc/self/task/%ld/schedstat", s->tid);
        FILE *file = fopen(path, "r");
        s->cpu_ns = s->wait_ns = 0;
        if (file != NULL) {
            if (fscanf(file, "%lf %lf", &s->cpu_ns, &s->wait_ns) != 2) s->cpu_ns = s->wait_ns = 0;
            fclose(file);
        }
    }
    closedir(dir);
    return count;
}

static struct timespec wake_period;
static volatile int stop_waking;

/* sleeps to absolute times, as the detector thread does, and nothing else */
static void *wake_only(void *unused)
{
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    while (!stop_waking) {
        next.tv_sec += wake_period.tv_sec;
        next.tv_nsec += wake_period.tv_nsec;
        if (next.tv_nsec >= 1000000000) {
            next.tv_sec++;
            next.tv_nsec -= 1000000000;
        }
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
    }
    return unused;
}

/* a dependent chain the compiler cannot fold; the time is read only every
 * CHECK_EVERY iterations (vDSO, no system call) */
static double compute_for(double seconds, uint64_t *sink)
{
    uint64_t x = 88172645463325252ull, iterations = 0;
    double start = now_s(), end = start + seconds;
    for (;;) {
        for (unsigned i = 0; i < CHECK_EVERY; i++) x = x * 6364136223846793005ull + 1442695040888963407ull;
        iterations += CHECK_EVERY;
        if (now_s() >= end) break;
    }
    *sink = x;
    return iterations / (now_s() - start);
}

static void measure(double seconds, double *values)
{
    thread_sample before[MAX_THREADS], after[MAX_THREADS];
    uint64_t sink;
    long self = (long)getpid();
    int count_before = sample_threads(before);
    double start = now_s();
    values[RATE] = compute_for(seconds, &sink);
    double wall = now_s() - start;
    int count_after = sample_threads(after);
    values[PREEMPTIONS] = values[WAKEUPS] = values[CPU] = values[WAIT] = values[RATE_PER_CPU] = 0;
    for (int i = 0; i < count_after; i++) {
        thread_sample base = {after[i].tid, 0, 0, 0, 0}; /* a thread started meanwhile */
        for (int j = 0; j < count_before; j++)
            if (before[j].tid == after[i].tid) base = before[j];
        if (after[i].tid == self) {
            double cpu_s = (after[i].cpu_ns - base.cpu_ns) * 1e-9;
            values[PREEMPTIONS] = (after[i].involuntary - base.involuntary) / wall;
            values[WAIT] = (after[i].wait_ns - base.wait_ns) / (wall * 1e9) * 100;
            values[RATE_PER_CPU] = cpu_s > 0 ? values[RATE] * wall / cpu_s : 0;
            continue;
        }
        values[WAKEUPS] += (after[i].voluntary - base.voluntary) / wall;
        values[CPU] += (after[i].cpu_ns - base.cpu_ns) / (wall * 1e9) * 100;
    }
    if (sink == 42) fprintf(stderr, "unlikely\n");
}

int main(int argc, char **argv)
{
    static const char *names[MEASURES] = {"compute_rate", "app_preemptions", "thread_wakeups", "thread_cpu",
                                          "app_wait", "rate_per_cpu"};
    static const char *units[MEASURES] = {"Miter/s", "1/s", "1/s", "%", "%", "Miter/s"};
    int rank, size;
    double values[MEASURES], sums[MEASURES];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double wake_s = argc == 3 ? atof(argv[2]) : 0;
    if (argc < 2 || argc > 3 || atof(argv[1]) <= 0 || (argc == 3 && !(wake_s > 0 && wake_s < 1))) {
        if (rank == 0) fprintf(stderr, "usage: idle_cost SECONDS [WAKE_PERIOD in (0, 1) s]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    pthread_t waker;
    if (wake_s > 0) {
        wake_period.tv_nsec = (long)(wake_s * 1e9);
        if (pthread_create(&waker, NULL, wake_only, NULL) != 0) MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    measure(atof(argv[1]), values);
    if (wake_s > 0) {
        stop_waking = 1;
        pthread_join(waker, NULL);
    }
    values[RATE] /= 1e6;
    values[RATE_PER_CPU] /= 1e6;
    MPI_Reduce(values, sums, MEASURES, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        for (int m = 0; m < MEASURES; m++)
            printf("{\"test\":\"%s\",\"value\":%.4f,\"unit\":\"%s\",\"ranks\":%d}\n", names[m], sums[m] / size,
                   units[m], size);
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
