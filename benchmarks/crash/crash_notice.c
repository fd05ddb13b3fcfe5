/*
 * How long a crash takes to reach every survivor (issue #18): after a
 * barrier that every rank passed, the victim records the time and SIGKILLs
 * itself; each survivor times its next MPI_Barrier, which must fail with
 * MPIX_ERR_PROC_FAILED, and then its first MPIX_Comm_agree. Nothing else
 * runs, so what the barrier waits for is the news of the crash.
 *
 *   crash_notice --victim R --inject-file F [--warmup 20] [--deadline-s 20]
 *                [--hold-file H] [--victim-mb M] [--exit-status S]
 *
 * --hold-file: after the warmup rank 0 creates H, and every rank waits
 * (in allreduces) until H is gone before the crash: time for whoever
 * watches H to change the machine first (the benchmark stops the runtime's
 * daemon there, so that only what the processes see themselves is left).
 *
 * --victim-mb: the victim first writes M MiB of its own (small pages), so
 * that the kernel takes a while to free them once it is killed: each
 * survivor then also says whether the victim had ended (a pidfd it holds on
 * it was readable) when its barrier failed, "victim_ended" (null without
 * the option).
 *
 * --exit-status: the victim calls _exit(S) instead, without MPI_Finalize,
 * which ULFM takes for a failure as well.
 *
 * Each survivor prints one JSON line: barrier_ms and agree_ms, from the
 * victim's kill (CLOCK_MONOTONIC is shared by every process of a machine,
 * network namespaces included; null if the victim failed before it killed
 * itself), the error class the barrier returned, the
 * set of failed ranks the agreement's communicator reports, and each rank's
 * failure kind as the detector's MPI_T variable tells it (null where the
 * variable does not exist: stock, or the detector off).
 */
#include <mpi.h>
#include <mpi-ext.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../../tests/mpi/ulfm_common.h"

static int victim = -1, warmup = 20, deadline_s = 20, victim_mb = 0, exit_status = 0;
static const char *inject_file = NULL, *hold_file = NULL;

static void parse(int argc, char **argv)
{
    for (int i = 1; i + 1 < argc; i += 2) {
        if (0 == strcmp(argv[i], "--victim")) victim = atoi(argv[i + 1]);
        else if (0 == strcmp(argv[i], "--inject-file")) inject_file = argv[i + 1];
        else if (0 == strcmp(argv[i], "--warmup")) warmup = atoi(argv[i + 1]);
        else if (0 == strcmp(argv[i], "--deadline-s")) deadline_s = atoi(argv[i + 1]);
        else if (0 == strcmp(argv[i], "--hold-file")) hold_file = argv[i + 1];
        else if (0 == strcmp(argv[i], "--victim-mb")) victim_mb = atoi(argv[i + 1]);
        else if (0 == strcmp(argv[i], "--exit-status")) exit_status = atoi(argv[i + 1]);
    }
}

/* The kill time goes to a file the survivors read afterwards: no message
 * may leave the victim between its time stamp and its death. */
static void die_now(void)
{
    char line[32];
    int fd = open(inject_file, O_WRONLY | O_CREAT | O_APPEND, 0644);
    int n = snprintf(line, sizeof line, "%lld\n", now_ns());
    if (fd >= 0 && n > 0) {
        ssize_t ignored = write(fd, line, (size_t) n);
        (void) ignored;
        close(fd);
    }
    if (exit_status) _exit(exit_status);
    kill(getpid(), SIGKILL);
}

/* mpi_ft_detector_failure_kind, read until it names the victim (the
 * detector may learn of the crash just after ULFM did), for at most 2 s;
 * written to out as a JSON array, or null. Called once every survivor has
 * taken its times, so that no survivor's wait here takes a CPU or a reply
 * from another's. */
static void read_failure_kinds(int size, char *out, size_t length)
{
    MPI_T_pvar_session session;
    MPI_T_pvar_handle handle;
    int provided, index, count = 0, flag, *kinds;
    long long until = now_ns() + 2000000000LL;
    size_t used;

    snprintf(out, length, "null");
    if (MPI_SUCCESS != MPI_T_init_thread(MPI_THREAD_SINGLE, &provided)) return;
    if (MPI_SUCCESS == MPI_T_pvar_get_index("mpi_ft_detector_failure_kind", MPI_T_PVAR_CLASS_STATE, &index)
        && MPI_SUCCESS == MPI_T_pvar_session_create(&session)) {
        if (MPI_SUCCESS == MPI_T_pvar_handle_alloc(session, index, NULL, &handle, &count) && count == size
            && NULL != (kinds = calloc((size_t) count, sizeof(int)))) {
            while (MPI_SUCCESS == MPI_T_pvar_read(session, handle, kinds) && 0 == kinds[victim]
                   && now_ns() < until) {
                MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_SELF, &flag, MPI_STATUS_IGNORE);
                usleep(1000);
            }
            used = (size_t) snprintf(out, length, "[");
            for (int i = 0; i < count && used < length; ++i) {
                used += (size_t) snprintf(out + used, length - used, "%s%d", i ? "," : "", kinds[i]);
            }
            if (used < length) snprintf(out + used, length - used, "]");
            free(kinds);
            MPI_T_pvar_handle_free(session, &handle);
        }
        MPI_T_pvar_session_free(&session);
    }
    MPI_T_finalize();
}

/* Memory the kernel frees page by page when the process ends. */
static void write_memory(size_t bytes)
{
    char *memory = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (MAP_FAILED == memory) return;
    madvise(memory, bytes, MADV_NOHUGEPAGE);
    memset(memory, 1, bytes);
}

/* A pidfd on the victim (the emulated nodes share this host's pids), or -1. */
static int watch_victim(int rank)
{
    int pid = (int) getpid(), victim_pid = 0;
    MPI_Bcast(rank == victim ? &pid : &victim_pid, 1, MPI_INT, victim, MPI_COMM_WORLD);
    return rank == victim ? -1 : (int) syscall(SYS_pidfd_open, victim_pid, 0);
}

static const char *ended(int pidfd)
{
    struct pollfd entry = {.fd = pidfd, .events = POLLIN};
    if (0 > pidfd) return "null";
    return 1 == poll(&entry, 1, 0) ? "true" : "false";
}

static long long read_kill_time(void)
{
    long long t = 0;
    FILE *f = fopen(inject_file, "r");
    if (NULL != f) {
        if (1 != fscanf(f, "%lld", &t)) t = 0;
        fclose(f);
    }
    return t;
}

/* Rank 0 creates hold_file; everyone goes on once it is gone. The victim
 * may leave the last allreduce and die while a survivor is still in it:
 * that survivor's allreduce then fails, and it goes on too. */
static void hold(int rank)
{
    int gone = 0;
    if (0 == rank) close(open(hold_file, O_WRONLY | O_CREAT, 0644));
    while (!gone) {
        gone = 0 == rank && 0 != access(hold_file, F_OK);
        if (MPI_SUCCESS != MPI_Allreduce(MPI_IN_PLACE, &gone, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD)) {
            break;
        }
        if (!gone) usleep(1000);
    }
}

int main(int argc, char **argv)
{
    int rank, size, rc, error_class = 0, flag = 1;
    long long barrier_done, agree_done, killed;
    char failed[256], kinds[1024], barrier_ms[32] = "null", agree_ms[32] = "null";
    const char *victim_ended = "null";
    int victim_fd = -1;
    MPI_Comm survivors;

    parse(argc, argv);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    set_deadline(rank, deadline_s, "deadline passed waiting for the crash to be reported");
    if (victim < 0 || victim >= size || NULL == inject_file) {
        if (0 == rank) fprintf(stderr, "usage: crash_notice --victim R --inject-file F\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (victim_mb > 0) {
        if (rank == victim) write_memory((size_t) victim_mb << 20);
        victim_fd = watch_victim(rank);
    }
    /* connections and the detector's ring are up before the crash */
    for (int i = 0; i < warmup; ++i) MPI_Barrier(MPI_COMM_WORLD);
    if (NULL != hold_file) hold(rank);
    if (rank == victim) die_now();

    rc = MPI_Barrier(MPI_COMM_WORLD);
    barrier_done = now_ns();
    if (victim_mb > 0) victim_ended = ended(victim_fd);
    MPI_Error_class(rc, &error_class);
    MPIX_Comm_failure_ack(MPI_COMM_WORLD);
    MPIX_Comm_agree(MPI_COMM_WORLD, &flag);
    agree_done = now_ns();
    format_failed_group(failed, sizeof failed);
    MPIX_Comm_shrink(MPI_COMM_WORLD, &survivors);
    MPI_Barrier(survivors);
    read_failure_kinds(size, kinds, sizeof kinds);
    killed = read_kill_time();
    /* no kill time: the victim failed before it killed itself (a false
     * suspicion), so there is nothing to time */
    if (0 < killed) {
        snprintf(barrier_ms, sizeof barrier_ms, "%.3f", (barrier_done - killed) / 1e6);
        snprintf(agree_ms, sizeof agree_ms, "%.3f", (agree_done - killed) / 1e6);
    }
    printf("{\"rank\":%d,\"size\":%d,\"victim\":%d,\"barrier_ms\":%s,\"agree_ms\":%s,"
           "\"barrier_error\":\"%s\",\"failed\":%s,\"failure_kind\":%s,\"victim_ended\":%s}\n",
           rank, size, victim, barrier_ms, agree_ms,
           MPIX_ERR_PROC_FAILED == error_class ? "proc_failed"
           : MPI_SUCCESS == error_class        ? "none"
                                               : "other",
           failed, kinds, victim_ended);
    fflush(stdout);
    MPI_Comm_free(&survivors);
    MPI_Finalize();
    return 0;
}
