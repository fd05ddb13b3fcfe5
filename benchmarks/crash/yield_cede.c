/*
 * How much CPU processes that wait by sched_yield() hand to a busy thread
 * of low priority, without MPI: the question behind a killed rank's
 * teardown (at SCHED_IDLE, the lifeline's last thread) delaying the
 * survivors of an oversubscribed job (docs/survivor-allreduce.md).
 *
 *   yield_cede WAITERS HOG SECONDS [HOW]
 *
 * WAITERS processes wait for SECONDS, each by HOW: yield (sched_yield, as
 * opal_progress does when oversubscribed; the default), sleep (nanosleep
 * of 1 ns) or spin (a short busy loop). Beside them one process loops for
 * as long, with HOG: idle (SCHED_IDLE), nice (nice 19), normal, or none
 * (no such process). Prints one JSON line: the hog's CPU seconds, and for
 * each waiter its turns, how many gaps between two turns were over 1 ms,
 * and the longest gap.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_WAITERS 64

typedef struct {
    long turns;
    long gaps_over_1ms;
    double longest_gap_ms;
} waiter_result_t;

static double seconds_of(clockid_t clock)
{
    struct timespec t;
    clock_gettime(clock, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static void wait_once(const char *how)
{
    if (!strcmp(how, "sleep")) {
        struct timespec one_ns = {0, 1};
        nanosleep(&one_ns, NULL);
    } else if (!strcmp(how, "spin")) {
        for (volatile int k = 0; k < 2000; k++) {
        }
    } else {
        sched_yield();
    }
}

static void run_hog(const char *hog, double seconds, int out)
{
    if (!strcmp(hog, "idle")) {
        struct sched_param none = {0};
        sched_setscheduler(0, SCHED_IDLE, &none);
    } else if (!strcmp(hog, "nice")) {
        setpriority(PRIO_PROCESS, 0, 19);
    }
    double end = seconds_of(CLOCK_MONOTONIC) + seconds;
    while (seconds_of(CLOCK_MONOTONIC) < end) {
    }
    double cpu = seconds_of(CLOCK_PROCESS_CPUTIME_ID);
    if (write(out, &cpu, sizeof cpu) != sizeof cpu) _exit(1);
    _exit(0);
}

static void run_waiter(const char *how, double seconds, int out)
{
    waiter_result_t r = {0};
    double last = seconds_of(CLOCK_MONOTONIC), end = last + seconds;
    while (last < end) {
        wait_once(how);
        double now = seconds_of(CLOCK_MONOTONIC), gap_ms = (now - last) * 1e3;
        r.gaps_over_1ms += gap_ms > 1.0;
        if (gap_ms > r.longest_gap_ms) r.longest_gap_ms = gap_ms;
        r.turns++;
        last = now;
    }
    if (write(out, &r, sizeof r) != sizeof r) _exit(1);
    _exit(0);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: %s WAITERS idle|nice|normal|none SECONDS [yield|sleep|spin]\n", argv[0]);
        return 2;
    }
    int waiters = atoi(argv[1]);
    const char *hog = argv[2], *how = argc > 4 ? argv[4] : "yield";
    double seconds = atof(argv[3]);
    int hog_pipe[2], waiter_pipes[MAX_WAITERS][2];
    if (waiters < 1 || waiters > MAX_WAITERS || seconds <= 0) {
        fprintf(stderr, "%s: WAITERS is 1 to %d, SECONDS positive\n", argv[0], MAX_WAITERS);
        return 2;
    }
    if (pipe(hog_pipe)) return 1;
    if (strcmp(hog, "none") && 0 == fork()) run_hog(hog, seconds, hog_pipe[1]);
    for (int i = 0; i < waiters; i++) {
        if (pipe(waiter_pipes[i])) return 1;
        if (0 == fork()) run_waiter(how, seconds, waiter_pipes[i][1]);
    }
    while (wait(NULL) > 0) {
    }
    double hog_cpu = 0;
    if (strcmp(hog, "none") && read(hog_pipe[0], &hog_cpu, sizeof hog_cpu) != sizeof hog_cpu) return 1;
    printf("{\"waiters\":%d,\"hog\":\"%s\",\"how\":\"%s\",\"seconds\":%.1f,\"hog_cpu_s\":%.3f,\"waiter\":[",
           waiters, hog, how, seconds, hog_cpu);
    for (int i = 0; i < waiters; i++) {
        waiter_result_t r;
        if (read(waiter_pipes[i][0], &r, sizeof r) != sizeof r) return 1;
        printf("%s{\"turns\":%ld,\"gaps_over_1ms\":%ld,\"longest_gap_ms\":%.2f}", i ? "," : "", r.turns,
               r.gaps_over_1ms, r.longest_gap_ms);
    }
    printf("]}\n");
    return 0;
}
