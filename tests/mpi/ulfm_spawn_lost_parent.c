/*
 * A parent that dies in the middle of MPI_Comm_spawn, before it connects
 * to the child, while a process it forked keeps its descriptors open (a
 * helper started with fork or system(): the runtime's socket to it stays
 * open after its death).
 *
 * 2 parents spawn 1 child whose MPI_Init comes --child-delay-ms late.
 * Rank 0 calls MPI_Comm_spawn at once; rank 1 never does: --die-after-ms
 * in, it forks a child that sleeps --hold-s, and SIGKILLs itself. The
 * runtime reaps rank 1 before its PMIx server sees the socket close, so
 * the connect that rank 0 and the child wait in must learn of the death
 * from that reaping. Each side prints one JSON line: rank 0 its spawn's
 * outcome, the child its MPI_Init's (a child whose MPI_Init fails exits
 * 2 before printing; mpirun's status says so). Whatever the outcome, the
 * processes must end: past --deadline-s each prints an error and exits 3.
 *
 *   ulfm_spawn_lost_parent [--child-delay-ms 1500] [--die-after-ms 300] [--hold-s 20] [--deadline-s 15]
 */
#include <mpi.h>
#include <mpi-ext.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ulfm_common.h"

struct options {
    int child_delay_ms;
    int die_after_ms;
    int hold_s;
    int deadline_s;
};

static void parse(int argc, char **argv, struct options *o)
{
    *o = (struct options){.child_delay_ms = 1500, .die_after_ms = 300, .hold_s = 20, .deadline_s = 15};
    for (int i = 1; i + 1 < argc; i += 2) {
        if (0 == strcmp(argv[i], "--child-delay-ms")) o->child_delay_ms = atoi(argv[i + 1]);
        else if (0 == strcmp(argv[i], "--die-after-ms")) o->die_after_ms = atoi(argv[i + 1]);
        else if (0 == strcmp(argv[i], "--hold-s")) o->hold_s = atoi(argv[i + 1]);
        else if (0 == strcmp(argv[i], "--deadline-s")) o->deadline_s = atoi(argv[i + 1]);
    }
}

static int child(const struct options *o, int argc, char **argv)
{
    char result[64];
    int rc;

    set_deadline(-1, o->deadline_s, "the child's MPI_Init passed its deadline");
    usleep((useconds_t) o->child_delay_ms * 1000);
    rc = MPI_Init(&argc, &argv);
    outcome(rc, result, sizeof result);
    printf("{\"child\":true,\"init\":\"%s\"}\n", result);
    fflush(stdout);
    MPI_Finalize();
    return 0;
}

int main(int argc, char **argv)
{
    struct options o;
    char delay[16], result[64];
    char *child_argv[] = {"--child", "--child-delay-ms", delay, NULL};
    MPI_Comm inter;
    int rank, rc;
    long long started;

    parse(argc, argv, &o);
    if (argc > 1 && 0 == strcmp(argv[1], "--child")) {
        parse(argc - 1, argv + 1, &o);
        return child(&o, argc, argv);
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    set_deadline(rank, o.deadline_s, "deadline passed in MPI_Comm_spawn");
    if (1 == rank) {
        usleep((useconds_t) o.die_after_ms * 1000);
        if (0 == fork()) {
            /* holds every descriptor of its parent, the runtime's socket too */
            sleep((unsigned) o.hold_s);
            _exit(0);
        }
        printf("{\"rank\":1,\"victim\":true,\"at_ns\":%lld}\n", now_ns());
        fflush(stdout);
        raise(SIGKILL);
    }
    snprintf(delay, sizeof delay, "%d", o.child_delay_ms);
    started = now_ns();
    rc = MPI_Comm_spawn(argv[0], child_argv, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter,
                        MPI_ERRCODES_IGNORE);
    outcome(rc, result, sizeof result);
    printf("{\"rank\":0,\"spawn\":\"%s\",\"ms\":%.1f}\n", result, (now_ns() - started) / 1e6);
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
