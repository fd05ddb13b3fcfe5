/*
 * Helpers shared by the ULFM test programs (ulfm_agree.c and the others):
 * one clock for every process of the machine, a group as a JSON list of
 * ranks, a bound on the whole program. Header-only, so each program
 * stays a single file that mpicc compiles as a user would.
 */
#ifndef ULFM_COMMON_H
#define ULFM_COMMON_H

#include <mpi.h>
#include <mpi-ext.h>

#include <execinfo.h>
#include <signal.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

/* CLOCK_MONOTONIC is shared by every process of the machine, namespaces
 * included, so injection and detection times compare across ranks. */
static inline long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* The processes of group as "[r1,r2,...]" in ranks of comm. */
static inline void format_ranks(MPI_Group group, MPI_Comm comm, char *out, size_t size)
{
    MPI_Group all;
    int count = 0;
    MPI_Group_size(group, &count);
    MPI_Comm_group(comm, &all);
    size_t used = (size_t)snprintf(out, size, "[");
    for (int i = 0; i < count && used < size; i++) {
        int rank;
        MPI_Group_translate_ranks(group, 1, &i, all, &rank);
        used += (size_t)snprintf(out + used, size - used, "%s%d", i ? "," : "", rank);
    }
    if (used < size) snprintf(out + used, size - used, "]");
    MPI_Group_free(&all);
}

/* The failed group of MPI_COMM_WORLD as "[r1,r2,...]" in world ranks. */
static inline void format_failed_group(char *out, size_t size)
{
    MPI_Group failed;
    MPIX_Comm_get_failed(MPI_COMM_WORLD, &failed);
    format_ranks(failed, MPI_COMM_WORLD, out, size);
    MPI_Group_free(&failed);
}

/* An MPI return code as a test record says it: "success", "revoked",
 * "proc_failed", "err_type", "err_op", else "error <class>". */
static inline void outcome(int rc, char *out, size_t size)
{
    int eclass;
    MPI_Error_class(rc, &eclass);
    if (rc == MPI_SUCCESS) snprintf(out, size, "success");
    else if (eclass == MPIX_ERR_REVOKED) snprintf(out, size, "revoked");
    else if (eclass == MPIX_ERR_PROC_FAILED) snprintf(out, size, "proc_failed");
    else if (eclass == MPI_ERR_TYPE) snprintf(out, size, "err_type");
    else if (eclass == MPI_ERR_OP) snprintf(out, size, "err_op");
    else snprintf(out, size, "error %d", eclass);
}

/* A bound on the whole program: past it, print {"rank":R,"error":WHAT} and
 * the stack the alarm interrupted (to stderr: where a rare hang stood, in
 * the test's own output), and exit 3, so a hang is reported by the
 * process that hung. */
static int deadline_rank = -1;
static const char *deadline_what = "deadline passed";

static inline void deadline_passed(int sig)
{
    char line[160];
    void *frames[48];
    int n = snprintf(line, sizeof line, "{\"rank\":%d,\"error\":\"%s\"}\n", deadline_rank, deadline_what);
    (void)sig;
    if (n > 0) {
        ssize_t ignored = write(STDOUT_FILENO, line, (size_t)n);
        (void)ignored;
    }
    n = snprintf(line, sizeof line, "rank %d at the deadline:\n", deadline_rank);
    if (n > 0) {
        ssize_t ignored = write(STDERR_FILENO, line, (size_t)n);
        (void)ignored;
    }
    backtrace_symbols_fd(frames, backtrace(frames, 48), STDERR_FILENO);
    _exit(3);
}

static inline void set_deadline(int rank, int seconds, const char *what)
{
    void *warm[1];
    deadline_rank = rank;
    deadline_what = what;
    (void)backtrace(warm, 1); /* loads the unwinder now: the handler must not */
    signal(SIGALRM, deadline_passed);
    alarm((unsigned)seconds);
}

#endif
