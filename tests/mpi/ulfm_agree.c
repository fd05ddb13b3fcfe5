/*
 * A ULFM program that loops on MPIX_Comm_agree until a failure interrupts
 * it, then does what an application does: acknowledge, agree on the failed
 * set, shrink, and check a computation on the survivors. Victims inject
 * their own failure (SIGKILL = crash, SIGSTOP = hang) so the injection time
 * is exact; with --kind mixed, the first victim crashes and the others hang.
 * The harness may also inject from outside (--kind external). A crashing
 * victim dies of SIGKILL unless --death names another way out: kill, term
 * (SIGTERM), segv (a write through a null pointer), abrt (abort()) or
 * exit3 (exit(3), the application's own non-zero status).
 *
 * Each survivor prints one JSON line with its timings, measured against the
 * injection time the first victim wrote to --inject-file (CLOCK_MONOTONIC is
 * shared by every process of the machine, namespaces included).
 *
 *   ulfm_agree --victims 3,5 --kind crash|hang|mixed|external|none
 *              [--death kill|term|segv|abrt|exit3]
 *              [--inject-after-ms 300] [--inject-file F] [--deadline-s 30]
 *              [--compute-s S]   (first compute S seconds without any MPI call)
 *              [--linger-s S]    (survivors go on S seconds more on the shrunk
 *                                 communicator: a job that outlives the
 *                                 resource manager's view of the failure)
 */
#include <mpi.h>
#include <mpi-ext.h>

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ulfm_common.h"

#define MAX_VICTIMS 64

struct options {
    int victims[MAX_VICTIMS];
    int victim_count;
    const char *kind;
    const char *death;
    long inject_after_ms;
    const char *inject_file;
    int deadline_s;
    double compute_s;
    double linger_s;
};

static int world_rank = -1;
static int deadline_s_for_alarm;

static void on_deadline(int sig)
{
    (void)sig;
    char line[160];
    int n = snprintf(line, sizeof line,
                     "{\"rank\":%d,\"error\":\"not detected within %d s\"}\n",
                     world_rank, deadline_s_for_alarm);
    if (n > 0) {
        ssize_t ignored = write(STDOUT_FILENO, line, (size_t)n);
        (void)ignored;
    }
    _exit(3);
}

static void usage_error(const char *what)
{
    fprintf(stderr, "ulfm_agree: %s\n", what);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

static void parse(int argc, char **argv, struct options *o)
{
    *o = (struct options){.kind = "crash", .death = "kill", .inject_after_ms = 300,
                          .inject_file = NULL, .deadline_s = 30};
    for (int i = 1; i < argc; i++) {
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (!value) usage_error("every option takes a value");
        if (!strcmp(argv[i], "--victims")) {
            char *copy = strdup(value), *save = NULL;
            for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
                if (o->victim_count == MAX_VICTIMS) usage_error("too many victims");
                o->victims[o->victim_count++] = atoi(t);
            }
            free(copy);
        } else if (!strcmp(argv[i], "--kind")) o->kind = value;
        else if (!strcmp(argv[i], "--death")) o->death = value;
        else if (!strcmp(argv[i], "--inject-after-ms")) o->inject_after_ms = atol(value);
        else if (!strcmp(argv[i], "--inject-file")) o->inject_file = value;
        else if (!strcmp(argv[i], "--deadline-s")) o->deadline_s = atoi(value);
        else if (!strcmp(argv[i], "--compute-s")) o->compute_s = atof(value);
        else if (!strcmp(argv[i], "--linger-s")) o->linger_s = atof(value);
        else usage_error("unknown option (see the comment at the top of ulfm_agree.c)");
        i++;
    }
    if (strcmp(o->kind, "crash") && strcmp(o->kind, "hang") && strcmp(o->kind, "mixed") &&
        strcmp(o->kind, "external") && strcmp(o->kind, "none"))
        usage_error("--kind must be crash, hang, mixed, external or none");
    if (strcmp(o->death, "kill") && strcmp(o->death, "term") && strcmp(o->death, "segv") &&
        strcmp(o->death, "abrt") && strcmp(o->death, "exit3"))
        usage_error("--death must be kill, term, segv, abrt or exit3");
}

static bool is_victim(const struct options *o, int rank)
{
    for (int i = 0; i < o->victim_count; i++)
        if (o->victims[i] == rank) return true;
    return false;
}

static void die(const char *how)
{
    if (!strcmp(how, "term")) raise(SIGTERM);
    else if (!strcmp(how, "segv")) {
        /* volatile both: the compiler must neither drop the write nor see the NULL */
        volatile int *volatile nowhere = NULL;
        *nowhere = 1;
    } else if (!strcmp(how, "abrt")) {
        abort();
    }
    if (!strcmp(how, "exit3")) exit(3);
    raise(SIGKILL);
}

static void inject(const struct options *o)
{
    if (o->inject_file && world_rank == o->victims[0]) {
        FILE *f = fopen(o->inject_file, "w");
        if (f) {
            fprintf(f, "%lld\n", now_ns());
            fclose(f);
        }
    }
    fflush(stdout);
    bool hang = !strcmp(o->kind, "hang") || (!strcmp(o->kind, "mixed") && world_rank != o->victims[0]);
    if (hang) raise(SIGSTOP);
    else die(o->death);
    /* a hung victim that is resumed must not rejoin the computation */
    pause();
}

static long long read_injection_ns(const struct options *o)
{
    long long t = 0;
    FILE *f = o->inject_file ? fopen(o->inject_file, "r") : NULL;
    if (f) {
        if (fscanf(f, "%lld", &t) != 1) t = 0;
        fclose(f);
    }
    return t;
}

/* A collective every 10 ms on the survivors' communicator for o->linger_s.
 * Each round they agree (logical AND) on going on: with a barrier and each
 * rank's own clock, a rank could stop one round before another, which then
 * waited in a barrier its peer never entered while the peer waited for it in
 * MPI_Finalize's shrink (1 CI run: an erroneous program, not a failure). */
static int linger(const struct options *o, MPI_Comm shrunk)
{
    long long end = now_ns() + (long long)(o->linger_s * 1e9);
    int rc = MPI_SUCCESS, go_on = 1;
    alarm((unsigned)(o->linger_s + o->deadline_s));
    while (rc == MPI_SUCCESS && go_on) {
        go_on = now_ns() < end;
        rc = MPI_Allreduce(MPI_IN_PLACE, &go_on, 1, MPI_INT, MPI_LAND, shrunk);
        usleep(10000);
    }
    if (rc != MPI_SUCCESS)
        printf("{\"rank\":%d,\"error\":\"allreduce while lingering returned %d\"}\n", world_rank, rc);
    else
        printf("{\"rank\":%d,\"lingered_s\":%.1f}\n", world_rank, o->linger_s);
    fflush(stdout);
    return rc;
}

static int survive(const struct options *o, long long t_interrupted)
{
    int acked = 0, flag = 1, size;
    char failed[1024];
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int rc;
    do { /* a failure learnt after the acknowledgement fails the agreement again */
        MPIX_Comm_ack_failed(MPI_COMM_WORLD, size, &acked);
        flag = 1;
        rc = MPIX_Comm_agree(MPI_COMM_WORLD, &flag);
    } while (rc == MPIX_ERR_PROC_FAILED);
    long long t_agreed = now_ns();
    format_failed_group(failed, sizeof failed);

    MPI_Comm shrunk;
    rc = rc == MPI_SUCCESS ? MPIX_Comm_shrink(MPI_COMM_WORLD, &shrunk) : rc;
    long long t_shrunk = now_ns();
    if (rc != MPI_SUCCESS) {
        printf("{\"rank\":%d,\"error\":\"agree/shrink after ack returned %d\"}\n", world_rank, rc);
        return 1;
    }
    /* the survivors add up their world ranks: checks the shrunk communicator */
    long long mine = world_rank, sum = 0, expected = 0;
    for (int r = 0; r < size; r++)
        if (!is_victim(o, r)) expected += r;
    rc = MPI_Allreduce(&mine, &sum, 1, MPI_LONG_LONG, MPI_SUM, shrunk);
    long long t0 = read_injection_ns(o);
    printf("{\"rank\":%d,\"failed\":%s,\"interrupted_ms\":%.3f,\"agreed_ms\":%.3f,"
           "\"shrink_ms\":%.3f,\"result_ok\":%s}\n",
           world_rank, failed, t0 ? (t_interrupted - t0) / 1e6 : -1.0,
           t0 ? (t_agreed - t0) / 1e6 : -1.0, (t_shrunk - t_agreed) / 1e6,
           rc == MPI_SUCCESS && sum == expected ? "true" : "false");
    fflush(stdout);
    if (rc == MPI_SUCCESS && o->linger_s > 0) rc = linger(o, shrunk);
    MPI_Comm_free(&shrunk);
    return rc == MPI_SUCCESS && sum == expected ? 0 : 1;
}

/* Busy arithmetic, no MPI call: only the detector's thread can keep this
 * process's heartbeats going. */
static double compute(double seconds)
{
    volatile double x = 1.0;
    long long end = now_ns() + (long long)(seconds * 1e9);
    while (now_ns() < end)
        for (int i = 0; i < 100000; i++) x = x * 1.0000001 + 1e-9;
    return x;
}

int main(int argc, char **argv)
{
    struct options o;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    parse(argc, argv, &o);
    bool failing = strcmp(o.kind, "none") != 0;
    bool victim = failing && is_victim(&o, world_rank);

    MPI_Barrier(MPI_COMM_WORLD);
    if (o.compute_s > 0) compute(o.compute_s);
    long long start = now_ns();
    int flag = 1, rc = MPI_SUCCESS, rounds = 0;
    deadline_s_for_alarm = o.deadline_s;
    signal(SIGALRM, on_deadline);
    alarm((unsigned)(o.deadline_s + o.compute_s));

    while (rc == MPI_SUCCESS) {
        if (victim && strcmp(o.kind, "external") && now_ns() - start >= o.inject_after_ms * 1000000LL)
            inject(&o);
        /* without failures, the ranks agree (bitwise AND) on when to stop */
        flag = failing || now_ns() - start < o.inject_after_ms * 1000000LL;
        rc = MPIX_Comm_agree(MPI_COMM_WORLD, &flag);
        rounds++;
        if (!failing && rc == MPI_SUCCESS && !flag) break;
    }
    long long t_interrupted = now_ns();
    /* a victim interrupted by another victim's failure still goes down */
    if (victim && strcmp(o.kind, "external")) inject(&o);
    int status = 0;
    if (failing) {
        status = survive(&o, t_interrupted);
    } else {
        printf("{\"rank\":%d,\"rounds\":%d,\"failed\":[]}\n", world_rank, rounds);
    }
    alarm(0);
    MPI_Finalize();
    return status;
}
