/*
 * What the detector costs a process in memory, descriptors and threads:
 * after MPI_Init and a settling time, each rank reads its resident set
 * (VmRSS), its open file descriptors and its threads from /proc/self, and
 * rank 0 prints the median and the largest over the ranks, one JSON line
 * each. run_footprint.py divides nothing: it subtracts the detector-off run
 * of the same size, measured in the same repetition.
 *
 *   footprint SETTLE_MS
 */
#include <dirent.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static long entries_in(const char *path)
{
    DIR *dir = opendir(path);
    struct dirent *entry;
    long count = 0;

    if (NULL == dir) {
        return -1;
    }
    while (NULL != (entry = readdir(dir))) {
        count += '.' != entry->d_name[0];
    }
    closedir(dir);
    return count - (0 == strcmp(path, "/proc/self/fd")); /* the one opendir holds */
}

static long resident_kib(void)
{
    char line[256];
    long kib = -1;
    FILE *status = fopen("/proc/self/status", "r");

    while (NULL != status && NULL != fgets(line, sizeof(line), status)) {
        if (1 == sscanf(line, "VmRSS: %ld kB", &kib)) {
            break;
        }
    }
    if (NULL != status) {
        fclose(status);
    }
    return kib;
}

static int compare_longs(const void *a, const void *b)
{
    long x = *(const long *) a, y = *(const long *) b;
    return (x > y) - (x < y);
}

static void report(const char *test, const char *unit, long value, int rank, int size)
{
    long *all = rank ? NULL : malloc(size * sizeof(long));

    MPI_Gather(&value, 1, MPI_LONG, all, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    if (0 == rank) {
        qsort(all, size, sizeof(long), compare_longs);
        printf("{\"test\":\"%s\",\"unit\":\"%s\",\"ranks\":%d,\"median\":%ld,\"max\":%ld}\n", test,
               unit, size, all[size / 2], all[size - 1]);
        fflush(stdout);
        free(all);
    }
}

int main(int argc, char **argv)
{
    int rank, size, flag;
    double settle_s = argc > 1 ? atof(argv[1]) / 1e3 : 0.5, start;
    MPI_Request request;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* a ring exchange makes the application's own connections first */
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Ibarrier(MPI_COMM_WORLD, &request);
    start = MPI_Wtime();
    do {
        struct timespec nap = {0, 1000000};
        nanosleep(&nap, NULL);
        MPI_Test(&request, &flag, MPI_STATUS_IGNORE);
    } while (!flag || MPI_Wtime() - start < settle_s);
    report("rss", "KiB", resident_kib(), rank, size);
    report("fds", "descriptors", entries_in("/proc/self/fd"), rank, size);
    report("threads", "threads", entries_in("/proc/self/task"), rank, size);
    MPI_Finalize();
    return 0;
}
