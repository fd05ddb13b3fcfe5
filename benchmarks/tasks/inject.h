/*
 * Failures a process injects into itself, so that their time is exact:
 * SIGKILL (a crash) or SIGSTOP (a hang), either at a time after the start
 * (a POSIX timer, so it strikes wherever the process is: inside MPI, in the
 * middle of a recovery) or halfway through the first long task a worker
 * runs after a time (where only the detector's thread speaks for it).
 *
 * Before it goes down, the victim writes the time to DIR/RANK, which the
 * process reporting the run reads to time each recovery. A failure injected
 * from outside (a whole emulated node killed by the driver) writes the same
 * files. Rejected: the driver signalling ranks by pid at a wall-clock time,
 * which cannot aim at "the middle of a long task".
 */
#ifndef TASKS_INJECT_H
#define TASKS_INJECT_H

#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bag.h"

struct inject_plan {
    bool armed;
    int signal;             /* SIGKILL or SIGSTOP */
    bool mid_long;          /* halfway through a long task, else at after_ms */
    double after_ms;
    char path[512];         /* DIR/RANK, empty without --inject-dir */
};

static struct inject_plan inject_plan;

/* Async-signal-safe: called from the timer's handler. */
static void inject_now(void)
{
    if (inject_plan.path[0]) {
        char line[32];
        int n = sizeof line;
        line[--n] = '\n';
        for (int64_t t = bag_now_ns(); t > 0 || n == (int)sizeof line - 1; t /= 10)
            line[--n] = (char)('0' + t % 10);
        int fd = open(inject_plan.path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            ssize_t ignored = write(fd, line + n, sizeof line - (size_t)n);
            (void)ignored;
            close(fd);
        }
    }
    raise(inject_plan.signal);
    /* a stopped victim that is resumed must not rejoin the computation */
    for (;;) pause();
}

static void inject_on_timer(int sig)
{
    (void)sig;
    inject_now();
}

/* Parses KIND:RANK:WHEN (KIND crash|hang; WHEN MS, long or long+MS) and
 * arms it if RANK is this process. Returns false on a malformed spec. */
static bool inject_parse(const char *spec, int my_rank, const char *dir)
{
    char kind[8];
    int rank, used = 0;
    if (sscanf(spec, "%7[a-z]:%d:%n", kind, &rank, &used) != 2 || used == 0) return false;
    const char *when = spec + used;
    bool mid_long = !strncmp(when, "long", 4);
    double after_ms = mid_long ? (when[4] == '+' ? atof(when + 5) : 0) : atof(when);
    if (strcmp(kind, "crash") && strcmp(kind, "hang")) return false;
    if (rank != my_rank) return true;
    inject_plan = (struct inject_plan){.armed = true, .mid_long = mid_long, .after_ms = after_ms,
                                       .signal = strcmp(kind, "crash") ? SIGSTOP : SIGKILL};
    if (dir) snprintf(inject_plan.path, sizeof inject_plan.path, "%s/%d", dir, my_rank);
    return true;
}

/* Starts the timer of a timed failure; start_ns is the run's start. */
static void inject_start(int64_t start_ns)
{
    if (!inject_plan.armed || inject_plan.mid_long) return;
    timer_t timer;
    struct sigevent ev = {.sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGRTMIN};
    int64_t at = start_ns + (int64_t)(inject_plan.after_ms * 1e6);
    struct itimerspec when = {.it_value = {.tv_sec = at / 1000000000LL, .tv_nsec = at % 1000000000LL}};
    signal(SIGRTMIN, inject_on_timer);
    if (timer_create(CLOCK_MONOTONIC, &ev, &timer) == 0)
        timer_settime(timer, TIMER_ABSTIME, &when, NULL);
}

/* Called between slices of a task: injects a mid-long failure once the
 * task is long, began after after_ms, and is half done. */
static void inject_check(int64_t start_ns, int64_t task_began_ns, bool is_long, double done_fraction)
{
    if (inject_plan.armed && inject_plan.mid_long && is_long && done_fraction >= 0.5 &&
        task_began_ns - start_ns >= (int64_t)(inject_plan.after_ms * 1e6))
        inject_now();
}

/* DIR/start: when the work began, for an injector outside (a lost node)
 * to aim at the same times as the victims here. */
static void inject_mark_start(const char *dir, int64_t start_ns)
{
    char path[512];
    if (!dir) return;
    snprintf(path, sizeof path, "%s/start.tmp", dir);
    FILE *f = fopen(path, "w");
    if (!f) return;
    fprintf(f, "%lld\n", (long long)start_ns);
    fclose(f);
    char final[512];
    snprintf(final, sizeof final, "%s/start", dir);
    rename(path, final);   /* the reader never sees half a line */
}

/* When RANK failed, from DIR/RANK; 0 when unknown. */
static int64_t inject_time_of(const char *dir, int rank)
{
    char path[512];
    long long t = 0;
    if (!dir) return 0;
    snprintf(path, sizeof path, "%s/%d", dir, rank);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    if (fscanf(f, "%lld", &t) != 1) t = 0;
    fclose(f);
    return t;
}

#endif
