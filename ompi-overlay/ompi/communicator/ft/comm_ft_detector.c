/*
 * Copyright (c) 2026      The btl_ft authors.  All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * ULFM's failure detector, backed by the btl_ft core.
 *
 * This file keeps upstream's entry points (register_params, init, start,
 * finalize) and binds the core to the rest of Open MPI: it builds the core's
 * configuration from the MCA variables and the runtime (ranks, nodes), turns
 * the core's conclusions into ULFM state exactly as upstream's detector did
 * (ompi_errhandler_proc_failed_internal, from opal_progress), fences what
 * this process itself observed failing (PMIx job control), and feeds every
 * failure ULFM learns elsewhere back into the core
 * (ompi_comm_failure_detector_proc_failed, called from the error handler).
 *
 * It also picks the transport: the detector's own UCX context (published
 * before the modex, so every process knows every other's address), or the
 * application's BTLs where UCX cannot start or the user asks for them. Only
 * the BTL path, whose thread shares the application's BTLs, turns OPAL's
 * locks on.
 *
 * Upstream's own detector (rank-order ring over the rbcast tag, one failure
 * per message, a busy-polling thread) is gone; the reliable broadcast it shared
 * stays, and revoke keeps using it unchanged.
 */

#include "ompi_config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opal/mca/base/mca_base_pvar.h"
#include "opal/mca/base/mca_base_var_enum.h"
#include "opal/mca/pmix/pmix-internal.h"
#include "opal/mca/threads/threads.h"
#include "opal/util/output.h"
#include "opal/util/show_help.h"

#include "ompi/communicator/communicator.h"
#include "ompi/communicator/ft/comm_ft_detector.h"
#include "ompi/errhandler/errhandler.h"
#include "ompi/group/group.h"
#include "ompi/proc/proc.h"
#include "ompi/runtime/params.h"

#define NS_PER_S 1000000000LL
/* How far apart processes may leave MPI_Init. The job's start skew is this
 * plus one timeout of slack; the core adds the two timeouts of a new link. */
#define LAUNCH_SKEW_NS NS_PER_S
#define DECLARED_DEAD_EXIT_STATUS 1

/* The shim's state: what init learnt, for the calls that come after it. */
typedef struct ompi_comm_ft_detector_module_t {
    ompi_comm_ft_detector_params_t params;
    bool active;
    /* the detector's own transport carries it (else the BTLs) */
    bool over_ucx;
    /* publish() made the UCX context, or why it could not */
    bool ucx_published;
    const char *ucx_failure;
    uint32_t world_size;
    uint32_t self;
    /* kept from init to start, where the witnesses learn their node's pids */
    uint32_t *nodes;
    /* by rank: ULFM already knew it failed (set on the application's
     * threads, read by the detector thread, which touches no ompi_proc_t) */
    uint8_t *known_failed;
} ompi_comm_ft_detector_module_t;

static ompi_comm_ft_detector_module_t module;
static const ompi_comm_ft_driver_ops_t common_ops;

int ompi_comm_failure_detector_register_params(void)
{
    return ompi_comm_ft_detector_params_register();
}

/* The node id of host, numbered by first appearance in hosts[0..*count);
 * host is kept (and added) there, or freed if already known. Searched from
 * the last: ranks mapped by node come in runs of one host. */
static uint32_t node_id_of(char **hosts, uint32_t *count, char *host)
{
    for (uint32_t id = *count; id-- > 0;) {
        if (0 == strcmp(hosts[id], host)) {
            free(host);
            return id;
        }
    }
    hosts[*count] = host;
    return (*count)++;
}

/* Node of every rank, for ring order "node"; NULL if the runtime cannot say,
 * in which case the core treats all ranks as one node. From the host names,
 * not PMIX_NODEID: under srun --mpi=pmix, Slurm's PMIx server (22.05)
 * answers PMIX_NODEID 0 for every rank, and every rank then took all the
 * others for node-mates (docs/slurm.md). */
static uint32_t *node_of_ranks(uint32_t size)
{
    uint32_t *nodes = malloc(size * sizeof(*nodes));
    char **hosts = calloc(size, sizeof(*hosts));
    opal_process_name_t name = *OMPI_PROC_MY_NAME;
    uint32_t count = 0;
    int rc = PMIX_SUCCESS;

    for (uint32_t rank = 0; NULL != nodes && NULL != hosts && rank < size; ++rank) {
        char *host = NULL;
        name.vpid = rank;
        OPAL_MODEX_RECV_VALUE_OPTIONAL(rc, PMIX_HOSTNAME, &name, &host, PMIX_STRING);
        if (PMIX_SUCCESS != rc || NULL == host) {
            opal_output_verbose(1, ompi_ftmpi_output_handle,
                                "%s btl_ft: no host name for rank %u, ring order ignores nodes",
                                OMPI_NAME_PRINT(OMPI_PROC_MY_NAME), rank);
            free(host);
            rc = PMIX_ERROR;
            break;
        }
        nodes[rank] = node_id_of(hosts, &count, host);
    }
    for (uint32_t id = 0; NULL != hosts && id < count; ++id) {
        free(hosts[id]);
    }
    free(hosts);
    if (PMIX_SUCCESS != rc || NULL == hosts) {
        free(nodes);
        return NULL;
    }
    return nodes;
}

/* Before the modex: the detector's own transport starts here, so that its
 * addresses travel with the modex. Never fails MPI_Init: without UCX the
 * detector takes the BTL path. */
int ompi_comm_failure_detector_publish(void)
{
    uint32_t size = (uint32_t) ompi_process_info.num_procs;
    bool one_node;

    ompi_comm_ft_log_init();
    if (size < 2 || !ompi_comm_ft_detector_params_want_ucx()) {
        return OMPI_SUCCESS;
    }
    /* the runtime knows the job's layout before the modex */
    one_node = ompi_process_info.num_local_peers + 1 >= size;
    module.ucx_published = OMPI_SUCCESS
                           == ompi_comm_ft_ucx_publish(OMPI_PROC_MY_NAME->vpid, size, one_node,
                                                       &module.ucx_failure);
    return OMPI_SUCCESS;
}

/* What the variables set, and what only this process knows. */
static btl_ft_config_t config_from_params(void)
{
    btl_ft_config_t config = module.params.detector;

    config.size = module.world_size;
    config.self = module.self;
    config.start_skew_ns = config.timeout_ns + LAUNCH_SKEW_NS;
    /* the driver progresses a computing process every half period */
    config.answer_within_ns = config.period_ns;
    return config;
}

/* Node watching needs the detector thread: it is its wait that holds the pidfds. */
static bool watches_node(void)
{
    return module.params.watch_node && module.params.use_thread;
}

/* The pids of this node's processes serve the witnesses and the node watch. */
static bool knows_node_processes(void)
{
    return module.params.detector.witness || watches_node();
}

/* The detector's own transport, if it started everywhere; false means the
 * BTL path, said once at verbose 1 when UCX was asked for. */
static bool start_ucx(ompi_comm_ft_driver_ops_t *ops, size_t *max_message_bytes)
{
    const char *reason = module.ucx_failure;

    if (OMPI_COMM_FT_TRANSPORT_UCX != module.params.transport) {
        return false;
    }
    if (!module.params.use_thread) {
        ompi_comm_ft_log(2, "btl_ft: no detector thread, so the BTL path costs no locks: using it");
        return false;
    }
    if (module.ucx_published
        && OMPI_SUCCESS == ompi_comm_ft_ucx_init(module.params.rdma_heartbeat, module.nodes,
                                                 ompi_comm_ft_driver_deliver_in_step,
                                                 max_message_bytes, &reason)) {
        ops->put_heartbeat = ompi_comm_ft_ucx_put_heartbeat;
        ops->send = ompi_comm_ft_ucx_send;
        ops->observer_handle = ompi_comm_ft_ucx_observer_handle;
        ops->read_flag = ompi_comm_ft_ucx_read_flag;
        ops->progress = ompi_comm_ft_ucx_progress;
        ops->arm = ompi_comm_ft_ucx_arm;
        ops->wait_fd = ompi_comm_ft_ucx_wait_fd();
        return true;
    }
    ompi_comm_ft_log(1, "btl_ft: the detector's own UCX transport cannot start (%s): it uses the "
                     "application's BTLs (mpi_ft_detector_transport btl)",
                     NULL == reason ? "unknown reason" : reason);
    return false;
}

static int start_btl(ompi_comm_ft_driver_ops_t *ops, btl_ft_config_t *config,
                     unsigned char *handle, size_t handle_capacity, size_t *max_message_bytes)
{
    size_t handle_length = 0;
    int ret;

    if (module.params.use_thread) {
        /* the detector thread drives the BTLs next to the application */
        opal_set_using_threads(true);
    }
    ret = ompi_comm_ft_btl_init(module.self, module.world_size, module.params.rdma_heartbeat,
                                ompi_comm_ft_driver_deliver, handle, handle_capacity,
                                &handle_length, max_message_bytes);
    config->flag_handle = handle_length ? handle : NULL;
    config->flag_handle_length = handle_length;
    ops->thread_progresses_opal = true;
    return ret;
}

static void stop_transport(void)
{
    if (module.over_ucx) {
        ompi_comm_ft_ucx_finalize();
    } else {
        ompi_comm_ft_btl_finalize();
    }
}

static int create_core(void)
{
    unsigned char handle[BTL_FT_HANDLE_MAX_BYTES];
    size_t max_message_bytes = 0;
    btl_ft_config_t config = config_from_params();
    ompi_comm_ft_driver_ops_t ops = common_ops;
    char error[256] = "";
    int ret;

    /* before anything is set up: what the user set must pass the core */
    if (OMPI_SUCCESS != (ret = ompi_comm_ft_detector_params_check(&config))) {
        return ret;
    }
    /* node ids serve the ring order, the witnesses and the transport
     * (node-mates by shared memory) */
    module.nodes = node_of_ranks(module.world_size);
    module.over_ucx = start_ucx(&ops, &max_message_bytes);
    if (!module.over_ucx
        && OMPI_SUCCESS != (ret = start_btl(&ops, &config, handle, sizeof(handle), &max_message_bytes))) {
        free(module.nodes);
        module.nodes = NULL;
        return ret;
    }
    if (knows_node_processes()) {
        ompi_comm_ft_witness_publish(watches_node());
    }
    config.node_of_rank = module.nodes;
    config.max_message_bytes = max_message_bytes;
    ret = ompi_comm_ft_driver_init(&config, &ops, module.params.use_thread, error, sizeof(error));
    if (OMPI_ERR_BAD_PARAM == ret) {
        opal_show_help(OMPI_FT_DETECTOR_HELP_FILE, "core-rejected", true, error);
    }
    if (OMPI_SUCCESS != ret) {
        stop_transport();
        free(module.nodes);
        module.nodes = NULL;
    }
    return ret;
}

/*
 * MPI_T: the performance variable mpi_ft_detector_failure_kind, one value
 * per rank of MPI_COMM_WORLD: how the detector learnt of its failure.
 */

static int failure_kind_count(struct mca_base_pvar_t *pvar, mca_base_pvar_event_t event, void *obj,
                              int *count)
{
    if (MCA_BASE_PVAR_HANDLE_BIND == event) {
        *count = (int) module.world_size;
    }
    return OMPI_SUCCESS;
}

static int failure_kind_read(const struct mca_base_pvar_t *pvar, void *value, void *obj)
{
    return ompi_comm_ft_driver_failure_kinds((int *) value, module.world_size);
}

static void register_failure_kind_pvar(void)
{
    static const mca_base_var_enum_value_t kinds[] = {
        {0, "alive"},
        {BTL_FT_UNREACHABLE, "unreachable"},
        {BTL_FT_CRASHED, "crashed"},
        {BTL_FT_HUNG, "hung"},
        {0, NULL},
    };
    mca_base_var_enum_t *names = NULL;

    if (OPAL_SUCCESS != mca_base_var_enum_create("mpi_ft_detector_failure_kind", kinds, &names)) {
        return; /* only MPI_T loses it */
    }
    (void) mca_base_pvar_register("ompi", "mpi", "ft", "detector_failure_kind",
                                  "How the failure detector learnt of each process's failure, one "
                                  "value per rank of MPI_COMM_WORLD: alive (not known failed), "
                                  "crashed (the runtime or its node saw it end), hung (silent "
                                  "past the timeout, fenced) or unreachable (a transport error). "
                                  "A failure may be "
                                  "learnt as hung or unreachable and later confirmed as crashed",
                                  OPAL_INFO_LVL_4, MCA_BASE_PVAR_CLASS_STATE, MCA_BASE_VAR_TYPE_INT,
                                  names, MCA_BASE_VAR_BIND_NO_OBJECT,
                                  MCA_BASE_PVAR_FLAG_READONLY | MCA_BASE_PVAR_FLAG_CONTINUOUS,
                                  failure_kind_read, NULL, failure_kind_count, NULL);
    OBJ_RELEASE(names); /* the variable keeps its own reference */
}

int ompi_comm_failure_detector_init(void)
{
    uint32_t size = (uint32_t) ompi_comm_size(&ompi_mpi_comm_world.comm);
    int ret;

    if (!ompi_ftmpi_enabled) {
        return OMPI_SUCCESS;
    }
    if (OMPI_SUCCESS != (ret = ompi_comm_ft_detector_params_get(&module.params))) {
        return ret;
    }
    if (OMPI_SUCCESS != (ret = ompi_comm_ft_btl_register_tag())) {
        return ret;
    }
    if (!module.params.enable || size < 2) {
        ompi_comm_ft_ucx_finalize(); /* published for nothing: a peer disabled it */
        return OMPI_SUCCESS;
    }
    module.world_size = size;
    module.self = (uint32_t) ompi_comm_rank(&ompi_mpi_comm_world.comm);
    if (NULL == (module.known_failed = calloc(size, sizeof(*module.known_failed)))) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    if (OMPI_SUCCESS != (ret = create_core())) {
        free(module.known_failed);
        module.known_failed = NULL;
        return ret;
    }
    module.active = true;
    register_failure_kind_pvar();
    opal_output_verbose(2, ompi_ftmpi_output_handle,
                        "%s btl_ft: detector on, period %.6f s, timeout %.6f s, %s, over %s",
                        OMPI_NAME_PRINT(OMPI_PROC_MY_NAME), module.params.detector.period_ns / 1e9,
                        module.params.detector.timeout_ns / 1e9,
                        module.params.use_thread ? "in a thread" : "from progress",
                        module.over_ucx ? "its own UCX context" : "the application's BTLs");
    return OMPI_SUCCESS;
}

int ompi_comm_failure_detector_start(void)
{
    if (!module.active) {
        return OMPI_SUCCESS;
    }
    if (knows_node_processes()) {
        ompi_comm_ft_witness_learn(module.nodes, module.world_size, module.self);
    }
    if (watches_node()) {
        ompi_comm_ft_witness_watch_ends(ompi_comm_ft_driver_watch, ompi_comm_ft_driver_report);
    }
    free(module.nodes); /* the core and the transport keep their own copies */
    module.nodes = NULL;
    if (module.over_ucx) {
        ompi_comm_ft_ucx_connect();
    } else {
        ompi_comm_ft_btl_make_endpoints();
    }
    return ompi_comm_ft_driver_start();
}

int ompi_comm_failure_detector_finalize(void)
{
    if (!module.active) {
        return OMPI_SUCCESS;
    }
    ompi_comm_ft_witness_leaving(); /* before anything that could end this process */
    module.active = false;
    ompi_comm_ft_driver_finalize();
    stop_transport();
    ompi_comm_ft_witness_finalize();
    free(module.nodes);
    module.nodes = NULL;
    free(module.known_failed);
    module.known_failed = NULL;
    return OMPI_SUCCESS;
}

static void report(const struct ompi_proc_t *proc, int kind)
{
    const opal_process_name_t *name = &proc->super.proc_name;

    if (module.active && name->jobid == OMPI_PROC_MY_NAME->jobid
        && name->vpid < module.world_size) {
        opal_output_verbose(2, ompi_ftmpi_output_handle, "%s btl_ft: rank %u reported %s",
                            OMPI_NAME_PRINT(OMPI_PROC_MY_NAME), name->vpid,
                            BTL_FT_CRASHED == kind ? "ended by the runtime" : "failed by ULFM");
        __atomic_store_n(&module.known_failed[name->vpid], 1, __ATOMIC_RELEASE);
        ompi_comm_ft_driver_report(name->vpid, kind);
    }
}

/* Whatever ULFM learnt, first hand or not (a BTL error, an agreement, our own
 * notice): proof of nothing more than unreachability. */
void ompi_comm_failure_detector_proc_failed(struct ompi_proc_t *proc)
{
    report(proc, BTL_FT_UNREACHABLE);
}

/* The runtime saw the process end: the one source that confirms a failure
 * for the quorum rule, even one ULFM already knows (a fenced hang). */
void ompi_comm_failure_detector_proc_crashed(struct ompi_proc_t *proc)
{
    report(proc, BTL_FT_CRASHED);
}

/* A shrink completed: the core settles the failures behind it when every
 * process it believes alive is a member (each of them answered). */
void ompi_comm_failure_detector_shrunk(struct ompi_communicator_t *comm)
{
    ompi_group_t *world_group = ompi_mpi_comm_world.comm.c_local_group;
    int size = ompi_comm_size(comm);
    int *local, *world;

    if (!module.active || OMPI_COMM_IS_INTER(comm)) {
        return;
    }
    local = malloc(size * sizeof(*local));
    world = malloc(size * sizeof(*world));
    if (NULL != local && NULL != world) {
        for (int i = 0; i < size; ++i) {
            local[i] = i;
        }
        if (OMPI_SUCCESS
            == ompi_group_translate_ranks(comm->c_local_group, size, local, world_group, world)) {
            /* int and uint32_t have the same size and representation here */
            ompi_comm_ft_driver_shrunk((const uint32_t *) world, (size_t) size);
        }
    }
    free(local);
    free(world);
}

static void close_call(uint32_t emitter, int64_t silent_ns)
{
    ompi_comm_ft_log(0, "btl_ft: warning: heard rank %u again after %.1f ms without a heartbeat "
                     "(timeout %.1f ms): a false failure came close; consider a larger "
                     "mpi_ft_detector_timeout",
                     emitter, silent_ns / 1e6, module.params.detector.timeout_ns / 1e6);
}

/* At finalize: silent when nothing came close, so a healthy job prints nothing. */
static void report_counters(const btl_ft_stats_t *stats)
{
    /* one line per process, read by benchmarks (propagate, two_levels) */
    opal_output_verbose(module.params.counters ? 0 : 10, ompi_ftmpi_output_handle,
                        "btl_ft: heartbeats sent %" PRIu64 " missed %" PRIu64 " suspicions %" PRIu64
                        " notices started %" PRIu64 " sent %" PRIu64 " received %" PRIu64
                        " malformed %" PRIu64 " newobserver %" PRIu64 " confirmations %" PRIu64
                        " witnesses asked %" PRIu64 " answered %" PRIu64,
                        stats->heartbeats_sent, stats->heartbeats_missed, stats->suspicions,
                        stats->notices_started, stats->notice_messages_sent, stats->notices_received,
                        stats->malformed_dropped, stats->new_observer_sent,
                        stats->confirmations, stats->witness_queries,
                        stats->witness_answers);
    if (0 == stats->close_calls && 0 == stats->confirmed_alive && 0 == stats->late_wakeups
        && 0 == stats->quorum_holds && 0 == stats->witnessed_running) {
        return;
    }
    opal_output(0, "%s btl_ft: heartbeat deadlines: %" PRIu64 " close calls, %" PRIu64
                   " timed-out emitters that answered a probe, %" PRIu64
                   " that a witness saw running, %" PRIu64
                   " late wake-ups of the detector, %" PRIu64 " quorum waits",
                OMPI_NAME_PRINT(OMPI_PROC_MY_NAME), stats->close_calls, stats->confirmed_alive,
                stats->witnessed_running, stats->late_wakeups, stats->quorum_holds);
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
 * Named from the rank alone: the detector thread touches no ompi_proc_t. */
static void fence(uint32_t rank)
{
    opal_process_name_t name = {.jobid = OMPI_PROC_MY_NAME->jobid, .vpid = rank};
    pmix_proc_t target;
    pmix_info_t directive;
    pmix_status_t rc;

    OPAL_PMIX_CONVERT_NAME(&target, &name);
    PMIX_INFO_LOAD(&directive, PMIX_JOB_CTRL_KILL, NULL, PMIX_BOOL);
    rc = PMIx_Job_control_nb(&target, 1, &directive, 1, fence_complete, NULL);
    PMIX_INFO_DESTRUCT(&directive);
    if (PMIX_SUCCESS != rc && PMIX_OPERATION_SUCCEEDED != rc) {
        ompi_comm_ft_log(1, "btl_ft: cannot ask the runtime to kill rank %u: %s", rank,
                         PMIx_Error_string(rc));
    }
}

static ompi_proc_t *world_peer(uint32_t rank)
{
    if (rank >= module.world_size || rank == module.self) {
        return NULL;
    }
    return ompi_comm_peer_lookup(&ompi_mpi_comm_world.comm, (int) rank);
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

static void failed(uint32_t rank, int kind)
{
    ompi_comm_ft_log(1, "btl_ft: rank %u failed: %s", rank, kind_text(kind));
}

/* This process observed `rank` fail (the core named it in `suspected`;
 * never a crash, which needs no fence). Not fenced when ULFM already knew
 * it failed (the runtime, or another observer, saw to it): a kill sent to
 * the daemon of a lost node made PRRTE end the whole job (patch 0041). */
static void suspected(uint32_t rank)
{
    bool fencing = module.params.fence && rank < module.world_size && rank != module.self
                   && !__atomic_load_n(&module.known_failed[rank], __ATOMIC_ACQUIRE);

    ompi_comm_ft_log(1, "btl_ft: rank %u failed as seen from here%s", rank,
                     fencing ? ", fencing it" : "");
    if (fencing) {
        fence(rank);
    }
}

static void tell_ulfm(uint32_t rank)
{
    ompi_proc_t *proc = world_peer(rank);

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
static void declared_dead_self(uint32_t told_by, const char *reason)
{
    char told_by_text[32];
    char *message;

    snprintf(told_by_text, sizeof(told_by_text), "%u", told_by);
    if (told_by == module.self) {
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

/* The BTL path's; start_ucx() replaces the transport's entries. */
static const ompi_comm_ft_driver_ops_t common_ops = {
    .put_heartbeat = ompi_comm_ft_btl_put_heartbeat,
    .send = ompi_comm_ft_btl_send,
    .observer_handle = ompi_comm_ft_btl_observer_handle,
    .local_state = ompi_comm_ft_witness_local_state,
    .read_flag = ompi_comm_ft_btl_read_flag,
    .ended = ompi_comm_ft_witness_ended,
    .wait_fd = -1,
    .failed = failed,
    .suspected = suspected,
    .declared_dead_self = declared_dead_self,
    .close_call = close_call,
    .report_counters = report_counters,
    .tell_ulfm = tell_ulfm,
};
