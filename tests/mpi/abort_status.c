/*
 * MPI_Abort's error code becomes mpirun's exit status, whatever happened
 * before and whatever the other processes do after.
 *
 *   abort_status --code 14 [--spawn-map-by VALUE] [--others-exit N]
 *
 * Rank 0 calls MPI_Abort(MPI_COMM_WORLD, code) while the others wait in a
 * barrier. With --spawn-map-by, the ranks first ask MPI_Comm_spawn for one
 * copy of this program with the info key "map_by" set to VALUE; for a value
 * the launcher refuses (an unknown qualifier), each rank prints
 * {"rank":R,"spawn":"refused"}, else {"rank":R,"spawn":"accepted"}, so the
 * driver knows which path it tested (rank 0's line may be lost in its
 * abort). With --others-exit, the other ranks,
 * once their barrier failed (a job that survives failures lets them go on),
 * exit with status N instead of finalizing.
 */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void spawn(char *program, const char *map_by, int rank)
{
    MPI_Info info;
    MPI_Comm children = MPI_COMM_NULL;
    int error = MPI_SUCCESS;

    MPI_Info_create(&info);
    MPI_Info_set(info, "map_by", map_by);
    int rc = MPI_Comm_spawn(program, MPI_ARGV_NULL, 1, info, 0, MPI_COMM_WORLD, &children, &error);
    MPI_Info_free(&info);
    printf("{\"rank\":%d,\"spawn\":\"%s\"}\n", rank, MPI_SUCCESS == rc ? "accepted" : "refused");
    fflush(stdout);
}

int main(int argc, char **argv)
{
    int code = 1, others_exit = 0, rank;
    const char *map_by = NULL;
    MPI_Comm parent;

    MPI_Init(&argc, &argv);
    MPI_Comm_get_parent(&parent);
    if (MPI_COMM_NULL != parent) { /* a spawn the launcher accepted: nothing to do */
        MPI_Finalize();
        return 0;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--code")) code = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--spawn-map-by")) map_by = argv[i + 1];
        else if (!strcmp(argv[i], "--others-exit")) others_exit = atoi(argv[i + 1]);
    }
    if (NULL != map_by) spawn(argv[0], map_by, rank);
    if (0 == rank) MPI_Abort(MPI_COMM_WORLD, code);
    if (MPI_SUCCESS != MPI_Barrier(MPI_COMM_WORLD) && 0 != others_exit) _exit(others_exit);
    MPI_Finalize();
    return 0;
}
