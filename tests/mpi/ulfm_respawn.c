/*
 * The respawn idiom of ULFM programs that keep their process count: a
 * victim crashes (SIGKILL) or hangs (SIGSTOP); the survivors see an
 * allreduce fail, acknowledge, shrink, spawn one replacement per failed
 * process, merge, and split back to the original rank order; then everyone
 * checks an allreduce of the ranks on the restored communicator and goes on
 * with --rounds more of them. The replacements learn which ranks they take
 * from the shrunk communicator's rank 0.
 *
 * Each process of the restored communicator prints one JSON line: its rank,
 * whether it is a replacement, the ranks that were replaced, whether every
 * allreduce gave the right sum, and how long the recovery took.
 *
 * With --then crash|hang, the replacements then fail in turn, and the
 * others loop on an allreduce of the restored communicator until it
 * fails, acknowledge and shrink: a replacement is observed like any
 * process. They print a second line: the ranks that failed and the size
 * of the shrunk communicator.
 *
 * With --recovery shrink, the survivors go on with the shrunk communicator
 * instead, spawning nothing: the recovery the respawn idiom is weighed
 * against (benchmarks/respawn).
 *
 * For the benchmark, every failing process first prints when it fails
 * ({"victim": true, "at_ns"}), and the others when their allreduce failed
 * (failed_ns, second_failed_ns) and when the recovered communicator gave
 * its first result (first_result_ns): CLOCK_MONOTONIC, which every process
 * of this machine shares, emulated nodes included.
 *
 *   ulfm_respawn --victims 1[,2...] --kind crash|hang [--then crash|hang] [--recovery respawn|shrink]
 *                [--rounds 20] [--deadline-s 30]
 */
#include <mpi.h>
#include <mpi-ext.h>

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ulfm_common.h"

#define MAX_VICTIMS 16
#define INJECT_AFTER_NS 300000000LL

struct options {
    int victims[MAX_VICTIMS];
    int victim_count;
    const char *kind;
    const char *then; /* NULL: the replacements do not fail */
    const char *recovery; /* respawn, or shrink only */
    int rounds;
    int deadline_s;
};

static void parse(int argc, char **argv, struct options *o)
{
    *o = (struct options){.kind = "crash", .recovery = "respawn", .rounds = 20, .deadline_s = 30};
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *value = argv[i + 1];
        if (!strcmp(argv[i], "--victims")) {
            char *copy = strdup(value), *save = NULL;
            for (char *t = strtok_r(copy, ",", &save); t && o->victim_count < MAX_VICTIMS;
                 t = strtok_r(NULL, ",", &save))
                o->victims[o->victim_count++] = atoi(t);
            free(copy);
        } else if (!strcmp(argv[i], "--kind")) o->kind = value;
        else if (!strcmp(argv[i], "--then")) o->then = value;
        else if (!strcmp(argv[i], "--recovery")) o->recovery = value;
        else if (!strcmp(argv[i], "--rounds")) o->rounds = atoi(value);
        else if (!strcmp(argv[i], "--deadline-s")) o->deadline_s = atoi(value);
    }
    if (o->victim_count == 0 || (strcmp(o->kind, "crash") && strcmp(o->kind, "hang"))
        || (o->then && strcmp(o->then, "crash") && strcmp(o->then, "hang"))
        || (strcmp(o->recovery, "respawn") && strcmp(o->recovery, "shrink"))
        || (o->then && strcmp(o->recovery, "respawn"))) {
        fprintf(stderr, "usage: ulfm_respawn --victims R[,R...] --kind crash|hang [--then crash|hang] "
                        "[--recovery respawn|shrink] [--rounds N] (--then needs respawn)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
}

static void fail(const char *kind, int rank)
{
    printf("{\"rank\":%d,\"victim\":true,\"kind\":\"%s\",\"at_ns\":%lld}\n", rank, kind, now_ns());
    fflush(stdout);
    raise(strcmp(kind, "hang") ? SIGKILL : SIGSTOP);
    pause();
}

/* The replacements fail; the others see it, acknowledge and shrink, and
 * print what failed and what is left. */
static void replacements_fail(MPI_Comm restored, bool replacement, int rank, const char *kind)
{
    MPI_Comm shrunk;
    MPI_Group failed;
    char list[128];
    int rc = MPI_SUCCESS, size = 0;
    if (replacement) fail(kind, rank);
    long long start = now_ns();
    while (rc == MPI_SUCCESS) {
        int one = 1, sum = 0;
        rc = MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, restored);
    }
    long long failed_at = now_ns();
    int restored_size, acked;
    MPI_Comm_size(restored, &restored_size);
    MPIX_Comm_ack_failed(restored, restored_size, &acked);
    MPIX_Comm_get_failed(restored, &failed);
    format_ranks(failed, restored, list, sizeof list);
    MPI_Group_free(&failed);
    rc = MPIX_Comm_shrink(restored, &shrunk);
    if (rc == MPI_SUCCESS) {
        MPI_Comm_size(shrunk, &size);
        MPI_Comm_free(&shrunk);
    }
    printf("{\"rank\":%d,\"second_failed\":%s,\"second_shrink_rc\":%d,\"second_size\":%d,"
           "\"second_ms\":%.1f,\"second_failed_ns\":%lld}\n", rank, list, rc, size, (failed_at - start) / 1e6,
           failed_at);
    fflush(stdout);
}

/* Sum of the ranks of comm by allreduce; true when it is right. */
static bool ranks_add_up(MPI_Comm comm)
{
    int rank, size, sum = -1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int rc = MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, comm);
    return rc == MPI_SUCCESS && sum == size * (size - 1) / 2;
}

/* A step of the idiom that failed ends this process with a record naming
 * it, rather than going on with a communicator that was never made. */
static void step_done(int rc, int rank, const char *step)
{
    char text[MPI_MAX_ERROR_STRING];
    int length;
    if (rc == MPI_SUCCESS) return;
    MPI_Error_string(rc, text, &length);
    printf("{\"rank\":%d,\"error\":\"%s failed: %s\"}\n", rank, step, text);
    fflush(stdout);
    exit(4);
}

/* The survivors' first step: shrink world, and name its failed ranks. */
static MPI_Comm shrink(MPI_Comm world, int *replaced, int *replaced_count)
{
    MPI_Comm shrunk;
    MPI_Group world_group, shrunk_group, gone;
    int world_rank, count;
    MPI_Comm_rank(world, &world_rank);
    MPIX_Comm_failure_ack(world);
    step_done(MPIX_Comm_shrink(world, &shrunk), world_rank, "MPIX_Comm_shrink");
    /* the shrink agreed on who is gone: every survivor replaces the same */
    MPI_Comm_group(world, &world_group);
    MPI_Comm_group(shrunk, &shrunk_group);
    MPI_Group_difference(world_group, shrunk_group, &gone);
    MPI_Group_size(gone, &count);
    if (count > MAX_VICTIMS) {
        fprintf(stderr, "ulfm_respawn: %d processes failed, more than the %d it replaces\n", count, MAX_VICTIMS);
        MPI_Abort(shrunk, 2);
    }
    for (int i = 0; i < count; i++)
        MPI_Group_translate_ranks(gone, 1, &i, world_group, &replaced[i]);
    *replaced_count = count;
    MPI_Group_free(&gone);
    MPI_Group_free(&shrunk_group);
    MPI_Group_free(&world_group);
    MPI_Comm_set_errhandler(shrunk, MPI_ERRORS_RETURN);
    return shrunk;
}

/* The survivors' side: shrink, spawn replacements for the failed ranks of
 * world, and return the restored communicator in the original rank order. */
static MPI_Comm respawn(MPI_Comm world, char **argv, int *replaced, int *replaced_count)
{
    MPI_Comm shrunk = shrink(world, replaced, replaced_count), inter, merged, restored;
    int world_rank, count = *replaced_count;
    MPI_Comm_rank(world, &world_rank);
    step_done(MPI_Comm_spawn(argv[0], argv + 1, count, MPI_INFO_NULL, 0, shrunk, &inter, MPI_ERRCODES_IGNORE),
              world_rank, "MPI_Comm_spawn");
    int shrunk_rank;
    MPI_Comm_rank(shrunk, &shrunk_rank);
    if (shrunk_rank == 0) {
        MPI_Send(&count, 1, MPI_INT, 0, 0, inter);
        for (int i = 0; i < count; i++) MPI_Send(&replaced[i], 1, MPI_INT, i, 1, inter);
    }
    step_done(MPI_Intercomm_merge(inter, 0, &merged), world_rank, "MPI_Intercomm_merge");
    step_done(MPI_Comm_split(merged, 0, world_rank, &restored), world_rank, "MPI_Comm_split");
    MPI_Comm_free(&merged);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&shrunk);
    return restored;
}

/* The replacements' side: learn which rank to take, merge and split. */
static MPI_Comm join(MPI_Comm parent, int *replaced, int *replaced_count, int *my_rank)
{
    MPI_Comm merged, restored;
    int self;
    MPI_Comm_rank(MPI_COMM_WORLD, &self);
    if (self == 0) MPI_Recv(replaced_count, 1, MPI_INT, 0, 0, parent, MPI_STATUS_IGNORE);
    MPI_Bcast(replaced_count, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Recv(my_rank, 1, MPI_INT, 0, 1, parent, MPI_STATUS_IGNORE);
    MPI_Allgather(my_rank, 1, MPI_INT, replaced, 1, MPI_INT, MPI_COMM_WORLD);
    step_done(MPI_Intercomm_merge(parent, 1, &merged), *my_rank, "MPI_Intercomm_merge");
    step_done(MPI_Comm_split(merged, 0, *my_rank, &restored), *my_rank, "MPI_Comm_split");
    MPI_Comm_free(&merged);
    return restored;
}

int main(int argc, char **argv)
{
    struct options o;
    MPI_Comm parent, restored;
    int replaced[MAX_VICTIMS], replaced_count = 0, rank;
    bool ok = true;
    MPI_Init(&argc, &argv);
    parse(argc, argv, &o);
    MPI_Comm_get_parent(&parent);
    bool replacement = parent != MPI_COMM_NULL, shrink_only = !strcmp(o.recovery, "shrink");
    long long start = now_ns(), recovered_ns = 0, failed_at = 0;

    if (replacement) {
        set_deadline(-1, o.deadline_s, "replacement not joined within the deadline");
        MPI_Comm_set_errhandler(parent, MPI_ERRORS_RETURN);
        restored = join(parent, replaced, &replaced_count, &rank);
    } else {
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        set_deadline(rank, o.deadline_s, "not recovered within the deadline");
        bool victim = false;
        for (int i = 0; i < o.victim_count; i++) victim |= o.victims[i] == rank;
        int rc = MPI_SUCCESS;
        while (rc == MPI_SUCCESS) {
            if (victim && now_ns() - start >= INJECT_AFTER_NS) fail(o.kind, rank);
            int one = 1, sum = 0;
            rc = MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        }
        failed_at = now_ns();
        if (shrink_only) restored = shrink(MPI_COMM_WORLD, replaced, &replaced_count);
        else restored = respawn(MPI_COMM_WORLD, argv, replaced, &replaced_count);
        recovered_ns = now_ns() - failed_at;
    }
    MPI_Comm_set_errhandler(restored, MPI_ERRORS_RETURN);
    int restored_rank;
    MPI_Comm_rank(restored, &restored_rank);
    ok = restored_rank == rank || shrink_only; /* a shrink renumbers */
    ok &= ranks_add_up(restored);
    long long first_result_at = now_ns();
    for (int round = 1; round <= o.rounds; round++) ok &= ranks_add_up(restored);
    /* the replacements fail only once everyone has checked its sums (a
     * replacement done first failed a slower rank's last allreduce) */
    if (o.then) MPI_Barrier(restored);

    char list[128];
    size_t used = (size_t)snprintf(list, sizeof list, "[");
    for (int i = 0; i < replaced_count && used < sizeof list; i++)
        used += (size_t)snprintf(list + used, sizeof list - used, "%s%d", i ? "," : "", replaced[i]);
    if (used < sizeof list) snprintf(list + used, sizeof list - used, "]");
    printf("{\"rank\":%d,\"replacement\":%s,\"replaced\":%s,\"result_ok\":%s,\"recovery_ms\":%.1f,"
           "\"failed_ns\":%lld,\"first_result_ns\":%lld}\n", rank, replacement ? "true" : "false", list,
           ok ? "true" : "false", recovered_ns / 1e6, failed_at, first_result_at);
    fflush(stdout);
    if (o.then) replacements_fail(restored, replacement, rank, o.then);
    alarm(0);
    MPI_Comm_free(&restored);
    MPI_Finalize();
    return 0;
}
