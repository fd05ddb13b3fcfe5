/*
 * A blocking send on a revoked communicator to a peer that has left.
 * The first --pairs pairs of ranks (2k, 2k+1; default: all) take part, the
 * other ranks look on. Rank 0 revokes a duplicate of MPI_COMM_WORLD; every
 * other rank learns of it from a receive that fails with MPIX_ERR_REVOKED.
 * Then the odd rank of each pair leaves:
 *   --peer freed   it frees the revoked communicator, as the usual ULFM
 *                  recovery does, tells its partner so on MPI_COMM_WORLD,
 *                  and goes on to MPI_Finalize;
 *   --peer killed  it kills itself (SIGKILL).
 * The even rank, knowing the communicator is revoked, then calls
 * MPI_Sendrecv on it with its partner, --bytes each way (default 1 MiB: a
 * rendezvous on every BTL). ULFM says that call fails with
 * MPIX_ERR_REVOKED. Before patch 0021, ob1 sent the rendezvous anyway and
 * waited for the partner's answer, which a partner that freed the
 * communicator never sends.
 *
 *   ulfm_revoked_sendrecv --peer freed|killed [--pairs P] [--bytes N] [--deadline-s S]
 *
 * Each even rank of a pair prints {"rank":r,"sendrecv":"revoked"|
 * "proc_failed"|"success"|"error <class>","ms":...}; with --peer killed,
 * every survivor then prints {"rank":r,"survivors":n} from a shrink of
 * MPI_COMM_WORLD. Every rank that finalizes prints {"rank":r,
 * "finalized":true}. A call still blocked after --deadline-s prints
 * {"rank":r,"error":"<call> still blocked at the deadline"} and exits 3.
 */
#include <mpi.h>
#include <mpi-ext.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ulfm_common.h"

static int rank;
static const char *volatile blocked_in = "startup";

static void on_deadline(int sig)
{
    (void)sig;
    char line[160];
    int n = snprintf(line, sizeof line,
                     "{\"rank\":%d,\"error\":\"%s still blocked at the deadline\"}\n", rank, blocked_in);
    ssize_t ignored = write(STDOUT_FILENO, line, (size_t)n);
    (void)ignored;
    _exit(3);
}

/* The odd rank of a pair: leave the revoked communicator, as --peer says. */
static void leave(const char *how, MPI_Comm *comm, int partner)
{
    if (!strcmp(how, "killed")) raise(SIGKILL);
    MPI_Comm_free(comm);
    int token = 1;
    MPI_Send(&token, 1, MPI_INT, partner, 3, MPI_COMM_WORLD);
}

/* The even rank of a pair: a blocking exchange with a partner that left. */
static void exchange(const char *how, MPI_Comm comm, int partner, int bytes)
{
    char *out = calloc(1, (size_t)bytes), *in = calloc(1, (size_t)bytes), result[32];
    if (!strcmp(how, "freed")) {
        int token;
        blocked_in = "receive of the partner's departure";
        MPI_Recv(&token, 1, MPI_INT, partner, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    blocked_in = "MPI_Sendrecv on the revoked communicator";
    long long start = now_ns();
    int rc = MPI_Sendrecv(out, bytes, MPI_BYTE, partner, 2, in, bytes, MPI_BYTE, partner, 2,
                          comm, MPI_STATUS_IGNORE);
    double ms = (now_ns() - start) / 1e6;
    outcome(rc, result, sizeof result);
    printf("{\"rank\":%d,\"sendrecv\":\"%s\",\"ms\":%.3f}\n", rank, result, ms);
    fflush(stdout);
    free(out);
    free(in);
}

int main(int argc, char **argv)
{
    const char *how = "freed";
    int bytes = 1 << 20, deadline_s = 10, pairs = -1, size;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--peer")) how = argv[i + 1];
        else if (!strcmp(argv[i], "--bytes")) bytes = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--deadline-s")) deadline_s = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--pairs")) pairs = atoi(argv[i + 1]);
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (pairs < 0) pairs = size / 2;
    if (pairs < 1 || 2 * pairs > size || (strcmp(how, "freed") && strcmp(how, "killed"))) {
        if (rank == 0) fprintf(stderr, "ulfm_revoked_sendrecv: --peer freed|killed, 1 <= --pairs <= np/2\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    signal(SIGALRM, on_deadline);
    alarm((unsigned)deadline_s);

    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MPIX_Comm_revoke(comm);
    } else {
        int ignored, rc;
        char result[32];
        blocked_in = "receive that learns of the revoke";
        rc = MPI_Recv(&ignored, 1, MPI_INT, 0, 1, comm, MPI_STATUS_IGNORE);
        outcome(rc, result, sizeof result);
        if (strcmp(result, "revoked")) {
            printf("{\"rank\":%d,\"error\":\"receive on the revoked communicator: %s\"}\n", rank, result);
        }
    }

    int partner = rank ^ 1;
    if (rank >= 2 * pairs) {
        MPI_Comm_free(&comm);
    } else if (rank % 2) {
        leave(how, &comm, partner);
    } else {
        exchange(how, comm, partner, bytes);
        MPI_Comm_free(&comm);
    }
    if (!strcmp(how, "killed")) {
        /* What a ULFM program does after losing processes. It also tells
         * every survivor of the failures before MPI_Finalize, which skips
         * the runtime's fence only for a process that knows of failures
         * when it enters (patch 0008): the fence waits for the dead. */
        MPI_Comm survivors;
        int count = -1;
        blocked_in = "MPIX_Comm_shrink";
        if (MPIX_Comm_shrink(MPI_COMM_WORLD, &survivors) == MPI_SUCCESS) {
            MPI_Comm_size(survivors, &count);
            MPI_Comm_free(&survivors);
        }
        printf("{\"rank\":%d,\"survivors\":%d}\n", rank, count);
        fflush(stdout);
    }
    blocked_in = "MPI_Finalize";
    MPI_Finalize();
    alarm(0);
    printf("{\"rank\":%d,\"finalized\":true}\n", rank);
    return 0;
}
