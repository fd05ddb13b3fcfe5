/*
 * MPIX_Comm_allreduce_survivors under failures, as a user calls it.
 *
 *   ulfm_survivors --when none|before|acked|during [--kind crash|hang]
 *                  [--victims r1,r2] [--iterations K] [--after-us U]
 *                  [--revoke] [--deadline-s S]
 *
 * Every rank contributes 2^rank (MPI_UINT64_T, MPI_SUM), so a result is the
 * bit mask of the values in it: a value counted twice carries into another
 * bit, a missing one leaves its bit clear.
 *   --when before  the victims fail (SIGKILL, or SIGSTOP with --kind hang)
 *                  after a barrier and the others call at once;
 *   --when acked   ... and the others first wait to see them in
 *                  MPIX_Comm_get_failed and acknowledge them;
 *   --when during  each victim fails --after-us microseconds (default: a
 *                  different moment per victim) into a loop of calls, so
 *                  inside one of them.
 *   --revoke       rank 0 revokes MPI_COMM_WORLD first: the call works on a
 *                  revoked communicator, as MPIX_Comm_agree does.
 *   --odd-ranks-fast-path BYTES  odd ranks allow the fast path up to BYTES
 *                  (mpi_ft_survivors_fast_max_bytes, set before MPI_Init),
 *                  as processes on nodes that differ would by default.
 *   --allreduce-first  the others first call MPI_Allreduce, which the
 *                  failure interrupts, as a program would before it turns
 *                  to the survivor allreduce (the failure revokes the
 *                  collectives, and their fragments in flight are dropped).
 * Each rank prints, per call, {"rank":r,"iter":i,"rc":"success"|...,
 * "value":v,"contributors":[...],"us":t}; then {"rank":r,"checks":...} for
 * the argument errors (a derived datatype, a non-commutative operation) and
 * other predefined operations; then {"rank":r,"finalized":true}. With
 * --records DIR, the per-call and checks records go to DIR/rank<r>.jsonl:
 * hundreds of lines per rank through mpirun's output forwarding lost line
 * tails when the runtime fenced a hung process (2 runs in 6).
 */
#include <mpi.h>
#include <mpi-ext.h>

#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "ulfm_common.h"

static int rank, size;
static FILE *records;  /* per-call records: stdout, or a file of --records DIR */
static int victims[64], victim_count;
static int kill_signal = SIGKILL;

static int is_victim(int r)
{
    for (int i = 0; i < victim_count; i++) {
        if (victims[i] == r) return 1;
    }
    return 0;
}

static void on_fail_timer(int sig, siginfo_t *info, void *context)
{
    (void)sig; (void)info; (void)context;
    kill(getpid(), kill_signal);
}

/* A one-shot timer that fails this process --after-us from now. */
static void fail_after(long us)
{
    struct sigaction action;
    struct sigevent event;
    struct itimerspec when;
    timer_t timer;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = on_fail_timer;
    action.sa_flags = SA_SIGINFO;
    sigaction(SIGUSR1, &action, NULL);
    memset(&event, 0, sizeof event);
    event.sigev_notify = SIGEV_SIGNAL;
    event.sigev_signo = SIGUSR1;
    timer_create(CLOCK_MONOTONIC, &event, &timer);
    memset(&when, 0, sizeof when);
    when.it_value.tv_sec = us / 1000000;
    when.it_value.tv_nsec = (us % 1000000) * 1000;
    timer_settime(timer, 0, &when, NULL);
}

static void wait_for_victims_and_ack(void)
{
    int failed = 0, acked = 0;
    while (failed < victim_count) {
        MPI_Group group;
        MPIX_Comm_get_failed(MPI_COMM_WORLD, &group);
        MPI_Group_size(group, &failed);
        MPI_Group_free(&group);
        if (failed < victim_count) {
            /* ULFM learns failures in MPI's progress, which get_failed does not run */
            int flag;
            MPI_Iprobe(MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
            usleep(1000);
        }
    }
    MPIX_Comm_ack_failed(MPI_COMM_WORLD, victim_count, &acked);
}

static void one_call(int iteration)
{
    uint64_t value = UINT64_C(1) << rank, result = 0;
    MPI_Group contributors = MPI_GROUP_NULL;
    char ranks[4096] = "[]", rc_text[32];
    long long start = now_ns();
    int rc = MPIX_Comm_allreduce_survivors(&value, &result, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD,
                                           &contributors);
    long long took = now_ns() - start;
    outcome(rc, rc_text, sizeof rc_text);
    if (rc == MPI_SUCCESS) {
        format_ranks(contributors, MPI_COMM_WORLD, ranks, sizeof ranks);
        MPI_Group_free(&contributors);
    }
    fprintf(records, "{\"rank\":%d,\"iter\":%d,\"rc\":\"%s\",\"value\":%" PRIu64 ",\"contributors\":%s,\"us\":%.1f}\n",
            rank, iteration, rc_text, result, ranks, took / 1e3);
    fflush(records);
}

static void first_minus_second(void *in, void *inout, int *count, MPI_Datatype *type)
{
    (void)type;
    for (int i = 0; i < *count; i++) ((int *)inout)[i] = ((int *)in)[i] - ((int *)inout)[i];
}

/* Other predefined operations and types, MPI_IN_PLACE, and the errors the
 * call gives for what it does not support. */
static void other_checks(void)
{
    double mine = rank + 0.5, max = 0;
    int low = 100 + rank, in_place = rank, two[2] = {rank, 1}, out[2];
    MPI_Group group;
    MPI_Datatype pair;
    MPI_Op subtract;
    char type_rc[32], op_rc[32];
    MPIX_Comm_allreduce_survivors(&mine, &max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD, &group);
    MPI_Group_free(&group);
    MPIX_Comm_allreduce_survivors(MPI_IN_PLACE, &in_place, 1, MPI_INT, MPI_BOR, MPI_COMM_WORLD, &group);
    MPI_Group_free(&group);
    MPIX_Comm_allreduce_survivors(&low, &low, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD, &group);
    MPI_Group_free(&group);
    MPI_Type_contiguous(2, MPI_INT, &pair);
    MPI_Type_commit(&pair);
    outcome(MPIX_Comm_allreduce_survivors(two, out, 1, pair, MPI_SUM, MPI_COMM_WORLD, &group), type_rc,
            sizeof type_rc);
    MPI_Type_free(&pair);
    MPI_Op_create(first_minus_second, 0, &subtract);
    outcome(MPIX_Comm_allreduce_survivors(two, out, 1, MPI_INT, subtract, MPI_COMM_WORLD, &group), op_rc,
            sizeof op_rc);
    MPI_Op_free(&subtract);
    fprintf(records, "{\"rank\":%d,\"checks\":{\"max\":%.1f,\"bor\":%d,\"min\":%d,\"derived\":\"%s\",\"noncommutative\":\"%s\"}}\n",
            rank, max, in_place, low, type_rc, op_rc);
    fflush(records);
}

int main(int argc, char **argv)
{
    const char *when = "none", *records_dir = NULL, *odd_fast_path = NULL;
    int iterations = 1, deadline = 30, revoke = 0, allreduce_first = 0;
    long after_us = -1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--when") && i + 1 < argc) when = argv[++i];
        else if (!strcmp(argv[i], "--kind") && i + 1 < argc) kill_signal = strcmp(argv[++i], "hang") ? SIGKILL : SIGSTOP;
        else if (!strcmp(argv[i], "--iterations") && i + 1 < argc) iterations = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--after-us") && i + 1 < argc) after_us = atol(argv[++i]);
        else if (!strcmp(argv[i], "--deadline-s") && i + 1 < argc) deadline = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--revoke")) revoke = 1;
        else if (!strcmp(argv[i], "--allreduce-first")) allreduce_first = 1;
        else if (!strcmp(argv[i], "--records") && i + 1 < argc) records_dir = argv[++i];
        else if (!strcmp(argv[i], "--odd-ranks-fast-path") && i + 1 < argc) odd_fast_path = argv[++i];
        else if (!strcmp(argv[i], "--victims") && i + 1 < argc) {
            for (char *part = strtok(argv[++i], ","); part && victim_count < 64; part = strtok(NULL, ",")) {
                victims[victim_count++] = atoi(part);
            }
        }
    }
    if (odd_fast_path && getenv("OMPI_COMM_WORLD_RANK") && atoi(getenv("OMPI_COMM_WORLD_RANK")) % 2) {
        setenv("OMPI_MCA_mpi_ft_survivors_fast_max_bytes", odd_fast_path, 1);
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    records = stdout;
    if (records_dir) {
        char path[4096];
        snprintf(path, sizeof path, "%s/rank%d.jsonl", records_dir, rank);
        records = fopen(path, "w");
        if (!records) records = stdout;
    }
    set_deadline(rank, deadline, "MPIX_Comm_allreduce_survivors still blocked at the deadline");

    MPI_Barrier(MPI_COMM_WORLD);
    if (revoke) {
        if (rank == 0) MPIX_Comm_revoke(MPI_COMM_WORLD);
        while (1) {
            int flag = 0;
            MPIX_Comm_is_revoked(MPI_COMM_WORLD, &flag);
            if (flag) break;
            MPI_Barrier(MPI_COMM_WORLD);  /* fails once revoked; progresses the revoke */
        }
    }
    if (is_victim(rank)) {
        if (!strcmp(when, "before") || !strcmp(when, "acked")) kill(getpid(), kill_signal);
        if (!strcmp(when, "during")) {
            /* victims spread over the first calls unless told when */
            long us = after_us >= 0 ? after_us : 200 + 700L * (rank % 7);
            fail_after(us);
        }
    }
    if (!strcmp(when, "acked")) wait_for_victims_and_ack();
    if (allreduce_first) {
        int mine = rank, sum = 0;
        MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD); /* fails somewhere: ignored */
    }

    for (int i = 0; i < iterations; i++) one_call(i);
    if (!revoke) other_checks();

    MPI_Finalize();
    printf("{\"rank\":%d,\"finalized\":true}\n", rank);
    fflush(stdout);
    return 0;
}
