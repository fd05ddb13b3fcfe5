/*
 * Copyright (c) 2026      The btl_ft authors.  All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * Where the detector's conclusions go: log lines that name the process as
 * users know it, ULFM (as upstream's detector told it, from opal_progress),
 * the runtime's fence of a process this one observed failing, and this
 * process's own exit when the others declared it failed. The driver calls
 * them through its ops table; the union's names come from
 * comm_ft_detector_union.c.
 */

#include "ompi_config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "opal/mca/pmix/pmix-internal.h"
#include "opal/util/output.h"
#include "opal/util/show_help.h"

#include "ompi/communicator/communicator.h"
#include "ompi/communicator/ft/comm_ft_detector.h"
#include "ompi/errhandler/errhandler.h"
#include "ompi/proc/proc.h"
#include "ompi/runtime/params.h"

#define DECLARED_DEAD_EXIT_STATUS 1

/* Set by comm_ft_detector.c while no detector thread runs (at init and at
 * each join), read by the thread. */
static struct {
    bool fence;
    bool counters;
    int64_t timeout_ns;
    uint32_t size;
    uint32_t self;
    const uint8_t *known_failed; /* by union rank: ULFM already knew it failed */
} state;

void ompi_comm_ft_conclusions_init(bool fence, bool counters, int64_t timeout_ns)
{
    state.fence = fence;
    state.counters = counters;
    state.timeout_ns = timeout_ns;
}

void ompi_comm_ft_conclusions_track(uint32_t size, uint32_t self, const uint8_t *known_failed)
{
    state.size = size;
    state.self = self;
    state.known_failed = known_failed;
}

/* A union rank as users know the process: "rank 3" in this job, "rank 0
 * of job [4523,2]" in a connected one (the job as mpirun prints it). */
static const char *who(uint32_t rank, char *text, size_t length)
{
    opal_process_name_t name = ompi_comm_ft_union_name_of(rank);

    if (name.jobid == OMPI_PROC_MY_NAME->jobid) {
        snprintf(text, length, "rank %u", name.vpid);
    } else {
        snprintf(text, length, "rank %u of job %s", name.vpid, OPAL_JOBID_PRINT(name.jobid));
    }
    return text;
}

void ompi_comm_ft_conclusions_close_call(uint32_t emitter, int64_t silent_ns)
{
    char text[64];

    ompi_comm_ft_log(0, "btl_ft: warning: heard %s again after %.1f ms without a heartbeat "
                     "(timeout %.1f ms): a false failure came close; consider a larger "
                     "mpi_ft_detector_timeout",
                     who(emitter, text, sizeof(text)), silent_ns / 1e6,
                     state.timeout_ns / 1e6);
}

/* At finalize: silent when nothing came close, so a healthy job prints nothing. */
void ompi_comm_ft_conclusions_report_counters(const btl_ft_stats_t *stats, uint64_t thread_progress_calls)
{
    /* one line per process, read by benchmarks (propagate, two_levels) and
     * tests (thread_progress) */
    opal_output_verbose(state.counters ? 0 : 10, ompi_ftmpi_output_handle,
                        "btl_ft: heartbeats sent %" PRIu64 " missed %" PRIu64 " suspicions %" PRIu64
                        " notices started %" PRIu64 " sent %" PRIu64 " received %" PRIu64
                        " malformed %" PRIu64 " newobserver %" PRIu64 " confirmations %" PRIu64
                        " witnesses asked %" PRIu64 " answered %" PRIu64 " thread progress calls %" PRIu64,
                        stats->heartbeats_sent, stats->heartbeats_missed, stats->suspicions,
                        stats->notices_started, stats->notice_messages_sent, stats->notices_received,
                        stats->malformed_dropped, stats->new_observer_sent,
                        stats->confirmations, stats->witness_queries,
                        stats->witness_answers, thread_progress_calls);
    if (0 == stats->close_calls && 0 == stats->confirmed_alive && 0 == stats->late_wakeups
        && 0 == stats->quorum_holds && 0 == stats->witnessed_running) {
        return;
    }
    opal_output(0, "%s btl_ft: heartbeat deadlines: %" PRIu64 " close calls, %" PRIu64
                   " timed-out emitters that answered a probe, %" PRIu64
                   " that a witness saw running (%" PRIu64 " of them starved), %" PRIu64
                   " late wake-ups of the detector, %" PRIu64 " quorum waits",
                OMPI_NAME_PRINT(OMPI_PROC_MY_NAME), stats->close_calls, stats->confirmed_alive,
                stats->witnessed_running, stats->witnessed_starved, stats->late_wakeups,
                stats->quorum_holds);
}

static void fence_complete(pmix_status_t status, pmix_info_t *info, size_t ninfo, void *cbdata,
                           pmix_release_cbfunc_t release_fn, void *release_cbdata)
{
    if (PMIX_SUCCESS != status && PMIX_OPERATION_SUCCEEDED != status) {
        ompi_comm_ft_log(1, "btl_ft: fencing failed: %s", PMIx_Error_string(status));
    }
    if (NULL != release_fn) {
        release_fn(release_cbdata);
    }
}

/* A suspected process may only be stopped, not dead: have the runtime kill
 * it, so it can never act on a communicator that already excluded it.
 * Named from the rank alone: the detector thread touches no ompi_proc_t.
 * Never with a namespace OPAL cannot name: PRRTE finds no such process,
 * and kills every process of the job instead. */
static void fence(uint32_t rank)
{
    opal_process_name_t name = ompi_comm_ft_union_name_of(rank);
    char text[64];
    pmix_proc_t target;
    pmix_info_t directive;
    pmix_status_t rc;

    if (OPAL_SUCCESS != opal_pmix_convert_jobid(target.nspace, name.jobid)) {
        ompi_comm_ft_log(0, "btl_ft: cannot ask the runtime to kill %s: its job's namespace is unknown here",
                         who(rank, text, sizeof(text)));
        return;
    }
    OPAL_PMIX_CONVERT_VPID(target.rank, name.vpid);
    PMIX_INFO_LOAD(&directive, PMIX_JOB_CTRL_KILL, NULL, PMIX_BOOL);
    rc = PMIx_Job_control_nb(&target, 1, &directive, 1, fence_complete, NULL);
    PMIX_INFO_DESTRUCT(&directive);
    if (PMIX_SUCCESS != rc && PMIX_OPERATION_SUCCEEDED != rc) {
        ompi_comm_ft_log(1, "btl_ft: cannot ask the runtime to kill %s: %s",
                         who(rank, text, sizeof(text)), PMIx_Error_string(rc));
    }
}

/* NULL for a process this one never met: ULFM has nothing to mark. */
static ompi_proc_t *union_peer(uint32_t rank)
{
    opal_process_name_t name = ompi_comm_ft_union_name_of(rank);

    if (rank >= state.size || rank == state.self) {
        return NULL;
    }
    if (name.jobid == OMPI_PROC_MY_NAME->jobid) {
        return ompi_comm_peer_lookup(&ompi_mpi_comm_world.comm, (int) name.vpid);
    }
    return ompi_proc_find(&name);
}

static const char *kind_text(int kind)
{
    switch (kind) {
    case BTL_FT_CRASHED: return "crashed (the runtime or its node saw it end)";
    case BTL_FT_UNREACHABLE: return "unreachable (a transport error)";
    case BTL_FT_HUNG: return "hung (silent past the timeout, fenced)";
    default: return "failed";
    }
}

void ompi_comm_ft_conclusions_failed(uint32_t rank, int kind)
{
    char text[64];

    ompi_comm_ft_log(1, "btl_ft: %s failed: %s", who(rank, text, sizeof(text)), kind_text(kind));
}

/* This process observed `rank` fail (the core named it in `suspected`;
 * never a crash, which needs no fence). Not fenced when ULFM already knew
 * it failed (the runtime, or another observer, saw to it): a kill sent to
 * the daemon of a lost node made PRRTE end the whole job (patch 0041). */
void ompi_comm_ft_conclusions_suspected(uint32_t rank)
{
    bool fencing = state.fence && rank < state.size && rank != state.self
                   && !__atomic_load_n(&state.known_failed[rank], __ATOMIC_ACQUIRE);
    char text[64];

    ompi_comm_ft_log(1, "btl_ft: %s failed as seen from here%s", who(rank, text, sizeof(text)),
                     fencing ? ", fencing it" : "");
    if (fencing) {
        fence(rank);
    }
}

void ompi_comm_ft_conclusions_tell_ulfm(uint32_t rank)
{
    ompi_proc_t *proc = union_peer(rank);

    if (NULL == proc) {
        return;
    }
    /* forward = false: the core spreads the notice, and the fence tells the
     * runtime. Upstream's forward also notifies the local PMIx clients, which
     * includes a falsely suspected process itself; ULFM then aborts it loudly
     * (ompi_proc_mark_as_failed) before our notice can explain why. */
    ompi_errhandler_proc_failed_internal(proc, PMIX_ERR_PROC_TERM_WO_SYNC, false);
}

/* ULFM's view of a failed process never reverts: a process the others declared
 * dead must not talk again. Say why, synchronously (show_help would go through
 * PMIx asynchronously and be lost), and leave without the runtime's abort
 * machinery, which would take the surviving job down with us. */
void ompi_comm_ft_conclusions_declared_dead_self(uint32_t told_by, const char *reason)
{
    char told_by_text[64];
    char *message;

    who(told_by, told_by_text, sizeof(told_by_text));
    if (told_by == state.self) {
        message = opal_show_help_string(OMPI_FT_DETECTOR_HELP_FILE, "cut-off", true,
                                        OMPI_NAME_PRINT(OMPI_PROC_MY_NAME));
    } else {
        message = opal_show_help_string(OMPI_FT_DETECTOR_HELP_FILE, "declared-dead", true,
                                        OMPI_NAME_PRINT(OMPI_PROC_MY_NAME), told_by_text,
                                        NULL == reason ? "(no reason given)" : reason);
    }
    if (NULL != message) {
        fputs(message, stderr);
        free(message);
    }
    fflush(stderr);
    _exit(DECLARED_DEAD_EXIT_STATUS);
}
