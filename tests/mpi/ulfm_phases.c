/*
 * A ULFM program that fails while the survivors are in a chosen kind of
 * operation, then recovers: acknowledge, agree on the failed set, shrink,
 * and check a computation on the survivors. ulfm_agree.c covers the loop on
 * MPIX_Comm_agree alone and stays the short example of the README; this one
 * adds the other places a failure can hit, so it carries more options.
 *
 *   ulfm_phases --phase idle|ring|allreduce|agree|shrink|revoke
 *               --victims 3,4 --kind crash|hang|none
 *               [--inject-after-ms 400] [--stagger-ms 0] [--inject-file F]
 *               [--deadline-s 30] [--compute-s 0] [--duration-s 1]
 *
 * Phases (what the survivors are doing when a victim goes down):
 *   idle      blocked in MPI_Recv from the first victim, which never sends
 *   ring      Isend to rank+1, Recv from MPI_ANY_SOURCE: a named receive from
 *             a live predecessor that already left for recovery would never
 *             complete, while an any-source receive is interrupted by any
 *             failure, so every rank learns of it without a revoke
 *   allreduce MPI_Allreduce in a loop; the first rank to see an error
 *             revokes, because a collective does not fail at every rank and
 *             the others would wait on partners that left
 *   agree     MPIX_Comm_agree in a loop
 *   shrink    MPIX_Comm_shrink in a loop; a victim dies instead of entering it
 *   revoke    ring with named receives: the ranks next to a victim see the
 *             failure and revoke, every other survivor must see MPIX_ERR_REVOKED
 *
 * Victim i (in --victims order) injects --stagger-ms * i after the first, so
 * an observer can be made to fail while it is mending the ring. A victim's
 * own thread injects at that time wherever its main thread is: a victim
 * that waited for its next step instead would, when blocked by an earlier
 * victim, go down only after that failure was detected, and concurrent
 * failures would become successive ones. In the shrink phase the victims
 * learn from an allreduce that the time has come and go down instead of
 * entering the next shrink. --kind none runs the allreduce phase for
 * --duration-s without failures, each step preceded by --compute-s of
 * arithmetic without any MPI call.
 *
 * Each survivor prints one JSON line; times are measured against the first
 * injection: every victim appends its time to --inject-file (CLOCK_MONOTONIC
 * is shared by every process of the machine).
 */
#include <mpi.h>
#include <mpi-ext.h>

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ulfm_common.h"

#define MAX_VICTIMS 64

enum phase { PHASE_IDLE, PHASE_RING, PHASE_ALLREDUCE, PHASE_AGREE, PHASE_SHRINK, PHASE_REVOKE };
static const char *const phase_names[] = {"idle", "ring", "allreduce", "agree", "shrink", "revoke"};

struct options {
    enum phase phase;
    int victims[MAX_VICTIMS];
    int victim_count;
    const char *kind;
    long inject_after_ms, stagger_ms;
    const char *inject_file;
    int deadline_s;
    double compute_s, duration_s;
};

/* How a survivor left the phase: what interrupted it and what it saw then. */
struct interruption {
    long long at_ns;
    int error_class;           /* MPI_SUCCESS when a shrink came back smaller */
    bool revoked_by_me;
    char seen[1024];           /* failed group at that moment, world ranks */
};

static int world_rank = -1, world_size;
static int deadline_s_for_alarm;

static void on_deadline(int sig)
{
    (void)sig;
    char line[160];
    int n = snprintf(line, sizeof line, "{\"rank\":%d,\"error\":\"not detected within %d s\"}\n",
                     world_rank, deadline_s_for_alarm);
    if (n > 0 && write(STDOUT_FILENO, line, (size_t)n) < 0) _exit(4);
    _exit(3);
}

static void usage_error(const char *what)
{
    fprintf(stderr, "ulfm_phases: %s\n", what);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

static void parse_victims(const char *value, struct options *o)
{
    char *copy = strdup(value), *save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (o->victim_count == MAX_VICTIMS) usage_error("too many victims");
        o->victims[o->victim_count++] = atoi(t);
    }
    free(copy);
}

static void parse(int argc, char **argv, struct options *o)
{
    *o = (struct options){.phase = PHASE_AGREE, .kind = "crash", .inject_after_ms = 400,
                          .deadline_s = 30, .duration_s = 1};
    const char *phase = "agree";
    for (int i = 1; i < argc; i += 2) {
        const char *key = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (!value) usage_error("every option takes a value");
        if (!strcmp(key, "--phase")) phase = value;
        else if (!strcmp(key, "--victims")) parse_victims(value, o);
        else if (!strcmp(key, "--kind")) o->kind = value;
        else if (!strcmp(key, "--inject-after-ms")) o->inject_after_ms = atol(value);
        else if (!strcmp(key, "--stagger-ms")) o->stagger_ms = atol(value);
        else if (!strcmp(key, "--inject-file")) o->inject_file = value;
        else if (!strcmp(key, "--deadline-s")) o->deadline_s = atoi(value);
        else if (!strcmp(key, "--compute-s")) o->compute_s = atof(value);
        else if (!strcmp(key, "--duration-s")) o->duration_s = atof(value);
        else usage_error("unknown option (see the comment at the top of ulfm_phases.c)");
    }
    int p = 0;
    while (p < 6 && strcmp(phase, phase_names[p])) p++;
    if (p == 6) usage_error("--phase must be idle, ring, allreduce, agree, shrink or revoke");
    o->phase = (enum phase)p;
    if (strcmp(o->kind, "crash") && strcmp(o->kind, "hang") && strcmp(o->kind, "none"))
        usage_error("--kind must be crash, hang or none");
    if (strcmp(o->kind, "none") && o->victim_count == 0) usage_error("--victims is required");
    if (!strcmp(o->kind, "none") && o->phase != PHASE_ALLREDUCE)
        usage_error("--kind none runs the allreduce phase only");
}

static int victim_index(const struct options *o, int rank)
{
    for (int i = 0; i < o->victim_count; i++)
        if (o->victims[i] == rank) return i;
    return -1;
}

static void sleep_until(long long deadline_ns)
{
    for (long long left = deadline_ns - now_ns(); left > 0; left = deadline_ns - now_ns()) {
        struct timespec ts = {.tv_sec = left / 1000000000LL, .tv_nsec = left % 1000000000LL};
        nanosleep(&ts, NULL);
    }
}

/* From the injector thread: no MPI and no stdio, whose locks the main thread
 * may hold wherever it is stopped. */
static void inject_now(const struct options *o)
{
    if (o->inject_file) {
        char line[32];
        int n = snprintf(line, sizeof line, "%lld\n", now_ns());
        int fd = open(o->inject_file, O_WRONLY | O_APPEND | O_CREAT, 0600);
        if (fd >= 0 && n > 0 && write(fd, line, (size_t)n) < 0) n = 0;
        if (fd >= 0) close(fd);
    }
    kill(getpid(), strcmp(o->kind, "hang") == 0 ? SIGSTOP : SIGKILL);
    /* Not _exit: the calling thread may run on before the group stop takes
     * it, and an exit is a crash that the runtime reports within a
     * millisecond. A stopped victim stays stopped until its observer's
     * fence kills it. */
    for (;;) pause();
}

struct injector {
    const struct options *o;
    long long at_ns;
};

static void *injector_main(void *arg)
{
    const struct injector *in = arg;
    sleep_until(in->at_ns);
    inject_now(in->o);
    return NULL;
}

static void start_injector(const struct options *o, long long at_ns)
{
    static struct injector in;
    pthread_t thread;
    in = (struct injector){.o = o, .at_ns = at_ns};
    if (pthread_create(&thread, NULL, injector_main, &in) != 0) usage_error("no injector thread");
    pthread_detach(thread);
}

/* The earliest time any victim appended. */
static long long read_injection_ns(const struct options *o)
{
    long long t = 0, first = 0;
    FILE *f = o->inject_file ? fopen(o->inject_file, "r") : NULL;
    while (f && fscanf(f, "%lld", &t) == 1)
        if (!first || t < first) first = t;
    if (f) fclose(f);
    return first;
}

/* One ring step; `left` is MPI_ANY_SOURCE in the ring phase (see the top). */
static int ring_step(int left, int tag)
{
    int right = (world_rank + 1) % world_size, token = world_rank, got;
    MPI_Request send;
    int rc = MPI_Isend(&token, 1, MPI_INT, right, tag, MPI_COMM_WORLD, &send);
    if (rc != MPI_SUCCESS) return rc;
    rc = MPI_Recv(&got, 1, MPI_INT, left, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) {
        MPI_Request_free(&send);
        return rc;
    }
    return MPI_Wait(&send, MPI_STATUS_IGNORE);
}

/* One step of the phase; a failure anywhere makes it return an error (or,
 * for shrink, a smaller communicator: *shrunk_size). */
static int step(const struct options *o, int iteration, int *shrunk_size)
{
    int left = (world_rank + world_size - 1) % world_size, tag = iteration % 30000;
    switch (o->phase) {
    case PHASE_IDLE: {
        int never;
        return MPI_Recv(&never, 1, MPI_INT, o->victims[0], 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    case PHASE_RING: return ring_step(MPI_ANY_SOURCE, tag);
    case PHASE_REVOKE: return ring_step(left, tag);
    case PHASE_ALLREDUCE: {
        int one = 1, count = 0;
        int rc = MPI_Allreduce(&one, &count, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        return rc == MPI_SUCCESS && count != world_size ? MPI_ERR_OTHER : rc;
    }
    case PHASE_AGREE: {
        int flag = 1;
        return MPIX_Comm_agree(MPI_COMM_WORLD, &flag);
    }
    case PHASE_SHRINK: {
        MPI_Comm c;
        int rc = MPIX_Comm_shrink(MPI_COMM_WORLD, &c);
        if (rc == MPI_SUCCESS) {
            MPI_Comm_size(c, shrunk_size);
            MPI_Comm_free(&c);
        }
        return rc;
    }
    }
    return MPI_ERR_OTHER;
}

/* Shrink phase only: whether the injection time has come, decided together
 * (by rank 0's clock), so that all victims go down before the same shrink. */
static bool injection_due(long long at_ns)
{
    int due = world_rank == 0 && now_ns() >= at_ns, any = 0;
    MPI_Allreduce(&due, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return any;
}

/* Runs the phase until a failure interrupts it. */
static struct interruption run_phase(const struct options *o, long long start_ns)
{
    struct interruption in = {0};
    int me = victim_index(o, world_rank), rc = MPI_SUCCESS, shrunk_size = world_size;
    long long first_ns = start_ns + o->inject_after_ms * 1000000LL;
    long long my_injection_ns = first_ns + me * o->stagger_ms * 1000000LL;
    if (me >= 0 && o->phase != PHASE_SHRINK) start_injector(o, my_injection_ns);
    if (me >= 0 && o->phase == PHASE_IDLE) for (;;) pause();
    for (int i = 0; rc == MPI_SUCCESS && shrunk_size == world_size; i++) {
        /* every rank takes part in the allreduce; the victims then skip the shrink */
        if (o->phase == PHASE_SHRINK && injection_due(first_ns) && me >= 0) {
            sleep_until(now_ns() + me * o->stagger_ms * 1000000LL);
            inject_now(o);
        }
        rc = step(o, i, &shrunk_size);
    }
    in.at_ns = now_ns();
    MPI_Error_class(rc, &in.error_class);
    if (me >= 0) for (;;) pause(); /* interrupted by an earlier victim: wait for its own turn */
    format_failed_group(in.seen, sizeof in.seen);
    bool failed_here = in.error_class == MPIX_ERR_PROC_FAILED ||
                       in.error_class == MPIX_ERR_PROC_FAILED_PENDING;
    if (failed_here && (o->phase == PHASE_ALLREDUCE || o->phase == PHASE_REVOKE)) {
        MPIX_Comm_revoke(MPI_COMM_WORLD);
        in.revoked_by_me = true;
    }
    return in;
}

static int agree_on_failures(void)
{
    int acked = 0, flag, rc;
    do { /* a failure learnt after the acknowledgement fails the agreement again */
        MPIX_Comm_ack_failed(MPI_COMM_WORLD, world_size, &acked);
        flag = 1;
        rc = MPIX_Comm_agree(MPI_COMM_WORLD, &flag);
    } while (rc == MPIX_ERR_PROC_FAILED);
    return rc;
}

/* Two checks of the shrunk communicator: the survivors' world ranks add up,
 * and a ring pass hands each one its left surviving neighbour's world rank. */
static bool compute_on(MPI_Comm shrunk, const struct options *o)
{
    int rank, size;
    MPI_Comm_rank(shrunk, &rank);
    MPI_Comm_size(shrunk, &size);
    long long mine = world_rank, sum = 0, expected = 0;
    int left_expected = -1, got = -1;
    for (int r = 0; r < world_size; r++)
        if (victim_index(o, r) < 0) expected += r;
    for (int d = 1; d < world_size && left_expected < 0; d++) {
        int r = (world_rank + world_size - d) % world_size;
        if (victim_index(o, r) < 0) left_expected = r;
    }
    int rc = MPI_Allreduce(&mine, &sum, 1, MPI_LONG_LONG, MPI_SUM, shrunk);
    if (rc == MPI_SUCCESS)
        rc = MPI_Sendrecv(&world_rank, 1, MPI_INT, (rank + 1) % size, 1, &got, 1, MPI_INT,
                          (rank + size - 1) % size, 1, shrunk, MPI_STATUS_IGNORE);
    return rc == MPI_SUCCESS && sum == expected && got == left_expected;
}

static int survive(const struct options *o, const struct interruption *in)
{
    char failed[1024];
    int rc = agree_on_failures();
    long long t_agreed = now_ns();
    format_failed_group(failed, sizeof failed);
    MPI_Comm shrunk;
    if (rc == MPI_SUCCESS) rc = MPIX_Comm_shrink(MPI_COMM_WORLD, &shrunk);
    long long t_shrunk = now_ns();
    if (rc != MPI_SUCCESS) {
        printf("{\"rank\":%d,\"error\":\"agree/shrink after ack returned %d\"}\n", world_rank, rc);
        return 1;
    }
    bool ok = compute_on(shrunk, o);
    long long t0 = read_injection_ns(o);
    int cls = in->error_class;
    const char *by = cls == MPI_SUCCESS ? "shrunk" : cls == MPIX_ERR_REVOKED ? "REVOKED"
                   : cls == MPIX_ERR_PROC_FAILED ? "PROC_FAILED"
                   : cls == MPIX_ERR_PROC_FAILED_PENDING ? "PROC_FAILED_PENDING" : "other";
    printf("{\"rank\":%d,\"phase\":\"%s\",\"interrupted_by\":\"%s\",\"error_class\":%d,"
           "\"revoked_by_me\":%s,\"seen\":%s,\"failed\":%s,\"interrupted_ms\":%.3f,"
           "\"agreed_ms\":%.3f,\"shrink_ms\":%.3f,\"result_ok\":%s}\n",
           world_rank, phase_names[o->phase], by, cls, in->revoked_by_me ? "true" : "false",
           in->seen, failed, t0 ? (in->at_ns - t0) / 1e6 : -1.0, t0 ? (t_agreed - t0) / 1e6 : -1.0,
           (t_shrunk - t_agreed) / 1e6, ok ? "true" : "false");
    fflush(stdout);
    MPI_Comm_free(&shrunk);
    return ok ? 0 : 1;
}

/* Busy arithmetic, no MPI call: only the detector's thread can keep this
 * process's heartbeats going. */
static void compute(double seconds)
{
    volatile double x = 1.0;
    long long end = now_ns() + (long long)(seconds * 1e9);
    while (now_ns() < end)
        for (int i = 0; i < 100000; i++) x = x * 1.0000001 + 1e-9;
}

/* No failure: compute, then a quick allreduce that also decides, by rank 0's
 * clock, when to stop. Any error or a wrong count is a false suspicion. */
static int run_without_failures(const struct options *o, long long start_ns)
{
    int steps = 0, rc = MPI_SUCCESS;
    bool count_ok = true;
    for (int go = 1; go && rc == MPI_SUCCESS; steps++) {
        compute(o->compute_s);
        int in[2] = {1, world_rank == 0 && now_ns() - start_ns < o->duration_s * 1e9}, out[2];
        rc = MPI_Allreduce(in, out, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        count_ok = count_ok && out[0] == world_size;
        go = out[1];
    }
    char failed[1024];
    format_failed_group(failed, sizeof failed);
    printf("{\"rank\":%d,\"phase\":\"allreduce\",\"rounds\":%d,\"failed\":%s,\"error_class\":%d,"
           "\"elapsed_s\":%.3f,\"result_ok\":%s}\n", world_rank, steps, failed, rc,
           (now_ns() - start_ns) / 1e9, rc == MPI_SUCCESS && count_ok ? "true" : "false");
    fflush(stdout);
    return rc == MPI_SUCCESS && count_ok ? 0 : 1;
}

int main(int argc, char **argv)
{
    struct options o;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    parse(argc, argv, &o);
    for (int i = 0; i < o.victim_count; i++)
        if (o.victims[i] < 0 || o.victims[i] >= world_size) usage_error("victim out of range");

    MPI_Barrier(MPI_COMM_WORLD);
    long long start = now_ns();
    deadline_s_for_alarm = o.deadline_s;
    signal(SIGALRM, on_deadline);
    int status;
    if (!strcmp(o.kind, "none")) {
        alarm((unsigned)(o.deadline_s + o.duration_s + 2 * o.compute_s));
        status = run_without_failures(&o, start);
    } else {
        alarm((unsigned)o.deadline_s);
        struct interruption in = run_phase(&o, start);
        status = survive(&o, &in);
    }
    alarm(0);
    MPI_Finalize();
    return status;
}
