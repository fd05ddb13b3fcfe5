/*
 * The survivor allreduce against MPI_Allreduce and against ULFM's recovery
 * idiom (benchmarks/survivors/run_survivors.py).
 *
 *   survivors_bench latency [--batches B] [--iterations I]
 *       for 8 B to 64 KiB of doubles: B batches of I calls of each of
 *       MPI_Allreduce and MPIX_Comm_allreduce_survivors, interleaved batch
 *       by batch; rank 0 prints {"test":"allreduce_<n>B","mpi_us":m,
 *       "survivors_us":s} with the medians of the batch means.
 *   survivors_bench instructions [--iterations I]
 *       for 8 B and 512 B: I calls of MPI_Allreduce, then I of
 *       MPIX_Comm_allreduce_survivors, each loop framed for callgrind
 *       (CALLGRIND_ZERO_STATS, then a dump named <call>_<n>B), so that a
 *       rank run under callgrind counts the instructions of each loop
 *       alone (run_survivors.py reads rank 0's); rank 0 prints
 *       {"iterations":I}. Without valgrind the client requests do nothing.
 *   survivors_bench fault --recovery survivors|idiom|detect --victims r1,r2
 *                         [--kind crash|hang] [--when before|during]
 *                         [--serial-ms M] --records F
 *       every rank makes one failure-free call (MPI_Allreduce for the
 *       idiom and detect) and passes a barrier; the first victim then notes the time
 *       and fails every victim (SIGKILL, or SIGSTOP with --kind hang, in
 *       one kill() of their process group): at
 *       once (before), or 2 ms later while the others are already in the
 *       call (during); with --serial-ms each victim fails itself, the
 *       second M ms after the first. The
 *       others reduce 2^rank with MPI_SUM: `survivors`, one
 *       MPIX_Comm_allreduce_survivors; `idiom`, MPI_Allreduce and, if it
 *       failed anywhere, revoke, shrink and MPI_Allreduce again on the
 *       shrunk communicator (until a round succeeds everywhere, as the
 *       usual loop does); `detect`, no collective: each polls
 *       MPIX_Comm_get_failed until it names every victim (the time until
 *       every survivor knows, what the detector alone takes), the sum
 *       then over the ranks it does not name. Victims write
 *       {"victim":r,"at_ns":t}, survivors
 *       {"rank":r,"done_ns":t,"value":v,"rounds":n}, each one line
 *       appended to the file F of --records F: a line printed would be
 *       carried by the runtime and read by the benchmark inside the time
 *       it measures, taking CPU from the survivors.
 */
#include <mpi.h>
#include <mpi-ext.h>

#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <valgrind/callgrind.h>

#include "../overhead/median.h"

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}


/* One record, one write() to a file opened for appending: lines of ranks
 * writing at once do not mix. */
static void write_record(const char *path, const char *line)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd < 0 || write(fd, line, strlen(line)) != (ssize_t)strlen(line)) perror(path);
    if (fd >= 0) close(fd);
}

/* Stock Open MPI has no survivor allreduce: there, only the idiom runs. */
#ifndef OMPI_HAVE_MPIX_COMM_ALLREDUCE_SURVIVORS
static int MPIX_Comm_allreduce_survivors(const void *in, void *out, int count, MPI_Datatype type, MPI_Op op,
                                         MPI_Comm comm, MPI_Group *group)
{
    (void)in; (void)out; (void)count; (void)type; (void)op; (void)comm; (void)group;
    return MPI_ERR_UNSUPPORTED_OPERATION;
}
#endif

static int survivors_call(const double *in, double *out, int count)
{
    MPI_Group contributors;
    int rc = MPIX_Comm_allreduce_survivors(in, out, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &contributors);
    if (rc == MPI_SUCCESS) MPI_Group_free(&contributors);
    return rc;
}

static void latency(int rank, int batches, int iterations)
{
    double *in = malloc(65536), *out = malloc(65536), *mpi_us = malloc(sizeof(double) * batches),
           *survivors_us = malloc(sizeof(double) * batches);
    for (int i = 0; i < 65536 / 8; i++) in[i] = rank + i;
    for (int bytes = 8; bytes <= 65536; bytes *= 8) {
        int count = bytes / 8;
        survivors_call(in, out, count); /* warm up both */
        MPI_Allreduce(in, out, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        for (int b = 0; b < batches; b++) {
            long long start;
            MPI_Barrier(MPI_COMM_WORLD);
            start = now_ns();
            for (int i = 0; i < iterations; i++) MPI_Allreduce(in, out, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            mpi_us[b] = (now_ns() - start) / 1e3 / iterations;
            MPI_Barrier(MPI_COMM_WORLD);
            start = now_ns();
            for (int i = 0; i < iterations; i++) survivors_call(in, out, count);
            survivors_us[b] = (now_ns() - start) / 1e3 / iterations;
        }
        if (rank == 0) {
            printf("{\"test\":\"allreduce_%dB\",\"mpi_us\":%.3f,\"survivors_us\":%.3f}\n", bytes,
                   median_of(mpi_us, batches), median_of(survivors_us, batches));
            fflush(stdout);
        }
    }
    free(in); free(out); free(mpi_us); free(survivors_us);
}

static void instructions(int rank, int iterations)
{
    double in[64] = {0}, out[64];
    char name[32];
    for (int bytes = 8; bytes <= 512; bytes *= 64) {
        int count = bytes / 8;
        survivors_call(in, out, count); /* warm up both */
        MPI_Allreduce(in, out, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
        CALLGRIND_ZERO_STATS;
        for (int i = 0; i < iterations; i++) MPI_Allreduce(in, out, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        snprintf(name, sizeof(name), "mpi_allreduce_%dB", bytes);
        CALLGRIND_DUMP_STATS_AT(name);
        MPI_Barrier(MPI_COMM_WORLD);
        CALLGRIND_ZERO_STATS;
        for (int i = 0; i < iterations; i++) survivors_call(in, out, count);
        snprintf(name, sizeof(name), "survivors_%dB", bytes);
        CALLGRIND_DUMP_STATS_AT(name);
    }
    if (rank == 0) printf("{\"iterations\":%d}\n", iterations);
}

static uint64_t idiom(int rank, int *rounds)
{
    MPI_Comm comm = MPI_COMM_WORLD, shrunk;
    uint64_t mine = UINT64_C(1) << rank, sum = 0;
    int rc;
    *rounds = 0;
    for (;;) {
        int flag;
        ++*rounds;
        rc = MPI_Allreduce(&mine, &sum, 1, MPI_UINT64_T, MPI_SUM, comm);
        /* everyone must know whether the round held everywhere */
        flag = rc == MPI_SUCCESS;
        MPIX_Comm_agree(comm, &flag);
        if (flag) break;
        MPIX_Comm_revoke(comm);
        MPIX_Comm_shrink(comm, &shrunk);
        if (comm != MPI_COMM_WORLD) MPI_Comm_free(&comm);
        comm = shrunk;
        MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    }
    if (comm != MPI_COMM_WORLD) MPI_Comm_free(&comm);
    return sum;
}

/* Spins in MPI (as a blocked collective would) until ULFM knows `expected`
 * failed processes, and notes when in *known_ns; returns the sum of 2^rank
 * over the processes it does not know failed. */
static uint64_t detect(int size, int expected, long long *known_ns)
{
    MPI_Group failed, world;
    int known = 0, ignored;
    uint64_t sum = 0;
    do {
        MPI_Iprobe(MPI_ANY_SOURCE, 0, MPI_COMM_SELF, &ignored, MPI_STATUS_IGNORE);
        MPIX_Comm_get_failed(MPI_COMM_WORLD, &failed);
        MPI_Group_size(failed, &known);
        if (known < expected) MPI_Group_free(&failed);
    } while (known < expected);
    *known_ns = now_ns();
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    for (int r = 0; r < size; r++) {
        int in_failed;
        MPI_Group_translate_ranks(world, 1, &r, failed, &in_failed);
        if (MPI_UNDEFINED == in_failed) sum += UINT64_C(1) << r;
    }
    MPI_Group_free(&world);
    MPI_Group_free(&failed);
    return sum;
}

static void fault(int rank, const char *recovery, int *victims, int victim_count, int sig, int during, int serial_ms,
                  const char *records)
{
    char line[160];
    int my_index = -1;
    for (int i = 0; i < victim_count; i++) {
        if (victims[i] == rank) my_index = i;
    }
    int size, pid = (int)getpid(), *pids, pgid, *pgids;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    pids = malloc(sizeof(int) * size);
    pgids = malloc(sizeof(int) * size);
    /* the emulated nodes share this host's process ids (tests/netns) */
    MPI_Allgather(&pid, 1, MPI_INT, pids, 1, MPI_INT, MPI_COMM_WORLD);
    /* One call each before the faults, as a program that reduces again and
     * again has made: a communicator's first survivor allreduce is also
     * its processes' agreement on the fast path. */
    if (!strcmp(recovery, "survivors")) {
        double warm = 0, warmed;
        survivors_call(&warm, &warmed, 1);
    } else {
        uint64_t warm = 0, warmed;
        MPI_Allreduce(&warm, &warmed, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    }
    /* Victims failing at once are failed by the first of them, so that
     * they fail at one instant: each failing itself, one that waited for a
     * CPU after the barrier failed milliseconds after the others (4 ms in
     * 1 run of 6, 8 ranks on 2 cores). And in one kill() of the process
     * group the first leads, which the others join: signalling them one by
     * one, the first then waited for a CPU behind their teardown before it
     * could signal itself (2 ms in a traced run). One that cannot join (in
     * another session, as under another daemon) is signalled alone, first. */
    if (my_index > 0 && !serial_ms) (void)setpgid(0, (pid_t)pids[victims[0]]);
    pgid = (int)getpgrp();
    MPI_Allgather(&pgid, 1, MPI_INT, pgids, 1, MPI_INT, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    if (my_index >= 0 && !serial_ms) {
        if (my_index == 0) {
            long long at;
            /* a group of its own and of the victims alone, as each rank leads one */
            int by_group = pgid == pid;
            if (during) usleep(2000);
            char all[8 * 48];
            int used = 0;
            at = now_ns();
            /* one write for all: the window holds as much of it for two victims as for one */
            for (int i = 0; i < victim_count; i++) {
                used += snprintf(all + used, sizeof(all) - used, "{\"victim\":%d,\"at_ns\":%lld}\n", victims[i], at);
            }
            write_record(records, all);
            for (int i = 1; i < victim_count; i++) {
                if (!by_group || pgids[victims[i]] != pgid) kill((pid_t)pids[victims[i]], sig);
            }
            kill(by_group ? -pgid : pid, sig);
        }
        for (;;) pause();
    }
    if (my_index >= 0) {
        long delay_us = (during ? 2000 : 0) + (long)my_index * serial_ms * 1000;
        if (delay_us) usleep((useconds_t)delay_us);
        snprintf(line, sizeof(line), "{\"victim\":%d,\"at_ns\":%lld}\n", rank, now_ns());
        write_record(records, line);
        kill(getpid(), sig);
        pause();
    }
    free(pids);
    free(pgids);
    if (!strcmp(recovery, "survivors")) {
        uint64_t mine = UINT64_C(1) << rank, sum = 0;
        MPI_Group contributors;
        int rc = MPIX_Comm_allreduce_survivors(&mine, &sum, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD,
                                               &contributors);
        long long done = now_ns();
        if (rc == MPI_SUCCESS) MPI_Group_free(&contributors);
        snprintf(line, sizeof(line), "{\"rank\":%d,\"done_ns\":%lld,\"value\":%" PRIu64 ",\"rounds\":1,\"rc\":%d}\n",
                 rank, done, sum, rc);
    } else if (!strcmp(recovery, "detect")) {
        int size;
        long long known;
        uint64_t sum;
        MPI_Comm_size(MPI_COMM_WORLD, &size);
        sum = detect(size, victim_count, &known);
        snprintf(line, sizeof(line), "{\"rank\":%d,\"done_ns\":%lld,\"value\":%" PRIu64 ",\"rounds\":0,\"rc\":0}\n",
                 rank, known, sum);
    } else {
        int rounds;
        uint64_t sum = idiom(rank, &rounds);
        long long done = now_ns();
        snprintf(line, sizeof(line), "{\"rank\":%d,\"done_ns\":%lld,\"value\":%" PRIu64 ",\"rounds\":%d,\"rc\":0}\n",
                 rank, done, sum, rounds);
    }
    write_record(records, line);
}

int main(int argc, char **argv)
{
    int rank, batches = 15, iterations = 200, victims[8], victim_count = 0, sig = SIGKILL, during = 0,
        serial_ms = 0;
    const char *recovery = "survivors", *records = NULL;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--batches") && i + 1 < argc) batches = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--iterations") && i + 1 < argc) iterations = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--recovery") && i + 1 < argc) recovery = argv[++i];
        else if (!strcmp(argv[i], "--kind") && i + 1 < argc) sig = strcmp(argv[++i], "hang") ? SIGKILL : SIGSTOP;
        else if (!strcmp(argv[i], "--when") && i + 1 < argc) during = !strcmp(argv[++i], "during");
        else if (!strcmp(argv[i], "--serial-ms") && i + 1 < argc) serial_ms = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--records") && i + 1 < argc) records = argv[++i];
        else if (!strcmp(argv[i], "--victims") && i + 1 < argc) {
            for (char *part = strtok(argv[++i], ","); part && victim_count < 8; part = strtok(NULL, ",")) {
                victims[victim_count++] = atoi(part);
            }
        }
    }
    if (argc > 1 && !strcmp(argv[1], "latency")) latency(rank, batches, iterations);
    else if (argc > 1 && !strcmp(argv[1], "instructions")) instructions(rank, iterations);
    else if (argc > 1 && !strcmp(argv[1], "fault")) {
        if (!records) {
            if (rank == 0) fprintf(stderr, "survivors_bench fault: --records F is required\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        fault(rank, recovery, victims, victim_count, sig, during, serial_ms, records);
    }
    MPI_Finalize();
    return 0;
}
