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
 * configuration from the MCA variables and the runtime (ranks, nodes), hands
 * the core's conclusions to comm_ft_detector_conclusions.c (ULFM state as
 * upstream's detector set it, the fence of what this process observed
 * failing), and feeds every failure ULFM learns elsewhere back into the core
 * (ompi_comm_failure_detector_proc_failed, called from the error handler).
 *
 * It also picks the transport: the detector's own UCX context (published
 * before the modex, so every process knows every other's address), or the
 * application's BTLs where UCX cannot start or the user asks for them. Only
 * the BTL path, whose thread shares the application's BTLs, turns OPAL's
 * locks on.
 *
 * The detector watches the union of the jobs this process is connected to
 * (comm_ft_detector_union.c): at MPI_Init its own job; after each spawn or
 * connect/accept, the union of both sides, over which a new detector starts
 * knowing the failures the old one knew (comm_ft_detector_join.c, the
 * other wiring file). The core numbers the union; ranks become process
 * names for ULFM and the runtime.
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
#include "ompi/communicator/ft/comm_ft_detector_module.h"
#include "ompi/communicator/ft/comm_ft_survivors.h"
#include "ompi/errhandler/errhandler.h"
#include "ompi/group/group.h"
#include "ompi/proc/proc.h"
#include "ompi/runtime/params.h"

#define NS_PER_S 1000000000LL
/* this process's host name, in the modex: the runtime gives a connected
 * job's host names to nobody outside it */
#define HOST_KEY "btl_ft.host"
/* How far apart processes may leave MPI_Init. The job's start skew is this
 * plus one timeout of slack; the core adds the two timeouts of a new link. */
#define LAUNCH_SKEW_NS NS_PER_S

ompi_comm_ft_detector_module_t ompi_comm_ft_module;
#define module ompi_comm_ft_module
static const ompi_comm_ft_driver_ops_t common_ops;

int ompi_comm_failure_detector_register_params(void)
{
    int ret = ompi_comm_ft_detector_params_register();
    return OMPI_SUCCESS == ret ? ompi_comm_survivors_register_params() : ret;
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

/* Node of every rank of the union, for ring order "node"; NULL if the
 * runtime cannot say, in which case the core treats all ranks as one node.
 * From the host names, not PMIX_NODEID: under srun --mpi=pmix, Slurm's PMIx
 * server (22.05) answers PMIX_NODEID 0 for every rank, and every rank then
 * took all the others for node-mates (docs/slurm.md). *node_count: how
 * many nodes. */
uint32_t *ompi_comm_ft_wiring_node_of_ranks(const opal_process_name_t *names, uint32_t size, uint32_t *node_count)
{
    uint32_t *nodes = malloc(size * sizeof(*nodes));
    char **hosts = calloc(size, sizeof(*hosts));
    uint32_t count = 0;
    int rc = PMIX_SUCCESS;

    for (uint32_t rank = 0; NULL != nodes && NULL != hosts && rank < size; ++rank) {
        opal_process_name_t name = names[rank];
        char *host = NULL;
        if (name.jobid == OMPI_PROC_MY_NAME->jobid) {
            OPAL_MODEX_RECV_VALUE_OPTIONAL(rc, PMIX_HOSTNAME, &name, &host, PMIX_STRING);
        } else {
            OPAL_MODEX_RECV_VALUE(rc, HOST_KEY, &name, &host, PMIX_STRING);
        }
        if (PMIX_SUCCESS != rc || NULL == host) {
            opal_output_verbose(1, ompi_ftmpi_output_handle,
                                "%s btl_ft: no host name for %s, ring order ignores nodes",
                                OMPI_NAME_PRINT(OMPI_PROC_MY_NAME), OMPI_NAME_PRINT(&name));
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
    *node_count = count;
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
    int rc;

    ompi_comm_ft_log_init();
    if (!ompi_comm_ft_detector_params_want_ucx()) {
        return OMPI_SUCCESS;
    }
    /* the runtime knows the job's layout before the modex; a spawned job
     * may join parents on other nodes */
    one_node = ompi_process_info.num_local_peers + 1 >= size && NULL == getenv("OMPI_PARENT_PORT");
    /* committed with the addresses, by ucx_publish; a job that joins ours
     * reads it (a failure only leaves the ring order without nodes there) */
    OPAL_MODEX_SEND_VALUE(rc, PMIX_GLOBAL, HOST_KEY, opal_process_info.nodename, PMIX_STRING);
    (void) rc;
    module.ucx_published = OMPI_SUCCESS
                           == ompi_comm_ft_ucx_publish(OMPI_PROC_MY_NAME->vpid, size, one_node,
                                                       &module.ucx_failure);
    return OMPI_SUCCESS;
}

/* What the variables set, and what only this process knows. */
btl_ft_config_t ompi_comm_ft_wiring_config(void)
{
    btl_ft_config_t config = module.params.detector;

    config.size = module.size;
    config.self = module.self;
    config.start_skew_ns = config.timeout_ns + LAUNCH_SKEW_NS;
    /* the driver progresses a computing process every half period */
    config.answer_within_ns = config.period_ns;
    return config;
}

/* Node watching needs the detector thread: it is its wait that holds the pidfds. */
bool ompi_comm_ft_wiring_watches_node(void)
{
    return module.params.watch_node && module.params.use_thread;
}

/* The pids of this node's processes serve the witnesses and the node watch. */
static bool knows_node_processes(void)
{
    return module.params.detector.witness || ompi_comm_ft_wiring_watches_node();
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
    ret = ompi_comm_ft_btl_init(module.self, module.size, module.params.rdma_heartbeat,
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

/* The names of this job's processes, by rank (free it). */
static opal_process_name_t *job_names(uint32_t size)
{
    opal_process_name_t *names = malloc(size * sizeof(*names));

    for (uint32_t rank = 0; NULL != names && rank < size; ++rank) {
        names[rank] = (opal_process_name_t){.jobid = OMPI_PROC_MY_NAME->jobid, .vpid = rank};
    }
    return names;
}

/* Node ids of this job's ranks, into module.nodes (NULL: unknown). */
static void find_nodes(void)
{
    opal_process_name_t *names = job_names(module.size);
    uint32_t node_count = 0;

    module.nodes = NULL == names ? NULL : ompi_comm_ft_wiring_node_of_ranks(names, module.size, &node_count);
    free(names);
}

/* The transport, and the witness's files: before MPI_Init's barrier. */
static int start_transport(btl_ft_config_t *config, unsigned char *handle, size_t handle_capacity)
{
    int ret;

    /* node ids serve the ring order, the witnesses and the transport
     * (node-mates by shared memory) */
    find_nodes();
    module.ops = common_ops;
    module.over_ucx = start_ucx(&module.ops, &module.max_message_bytes);
    if (!module.over_ucx
        && OMPI_SUCCESS != (ret = start_btl(&module.ops, config, handle, handle_capacity,
                                            &module.max_message_bytes))) {
        free(module.nodes);
        module.nodes = NULL;
        return ret;
    }
    if (knows_node_processes()) {
        ompi_comm_ft_witness_publish(ompi_comm_ft_wiring_watches_node(), module.params.watch_lifeline,
                                     module.params.use_thread);
    }
    return OMPI_SUCCESS;
}

int ompi_comm_ft_wiring_create_core(btl_ft_config_t *config)
{
    char error[256] = "";
    int ret;

    config->max_message_bytes = module.max_message_bytes;
    ret = ompi_comm_ft_driver_init(config, &module.ops, module.params.use_thread, error, sizeof(error));
    if (OMPI_ERR_BAD_PARAM == ret) {
        opal_show_help(OMPI_FT_DETECTOR_HELP_FILE, "core-rejected", true, error);
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

/* The union's kinds, read for MPI_COMM_WORLD's ranks. */
static int failure_kind_read(const struct mca_base_pvar_t *pvar, void *value, void *obj)
{
    int *world = (int *) value, *kinds = calloc(module.size, sizeof(*kinds));
    opal_process_name_t name = *OMPI_PROC_MY_NAME;
    uint32_t rank;
    int ret = NULL == kinds ? OMPI_ERR_OUT_OF_RESOURCE
                            : ompi_comm_ft_driver_failure_kinds(kinds, module.size);

    for (name.vpid = 0; OMPI_SUCCESS == ret && name.vpid < module.world_size; ++name.vpid) {
        world[name.vpid] = ompi_comm_ft_union_rank_of(&name, &rank) ? kinds[rank] : 0;
    }
    free(kinds);
    return ret;
}

void ompi_comm_ft_wiring_register_pvar(void)
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

/* A job of one process has nobody to observe: it waits, with its UCX
 * transport ready, for a join (it was spawned, or will connect), and
 * published for the witnesses of node-mates it may join. */
static int stand_by(void)
{
    find_nodes();
    module.ops = common_ops;
    module.over_ucx = start_ucx(&module.ops, &module.max_message_bytes);
    if (knows_node_processes()) {
        ompi_comm_ft_witness_publish(ompi_comm_ft_wiring_watches_node(), module.params.watch_lifeline,
                                     module.params.use_thread);
    }
    free(module.nodes);
    module.nodes = NULL;
    module.standby = module.over_ucx;
    return OMPI_SUCCESS;
}

int ompi_comm_failure_detector_init(void)
{
    uint32_t size = (uint32_t) ompi_comm_size(&ompi_mpi_comm_world.comm);
    unsigned char handle[BTL_FT_HANDLE_MAX_BYTES];
    btl_ft_config_t config;
    int ret;

    if (!ompi_ftmpi_enabled) {
        return OMPI_SUCCESS;
    }
    if (OMPI_SUCCESS != (ret = ompi_comm_ft_detector_params_get(&module.params))
        || OMPI_SUCCESS != (ret = ompi_comm_survivors_check_params())) {
        return ret;
    }
    if (OMPI_SUCCESS != (ret = ompi_comm_ft_btl_register_tag())) {
        return ret;
    }
    if (!module.params.enable) {
        ompi_comm_ft_ucx_finalize(); /* published for nothing: a peer disabled it */
        return OMPI_SUCCESS;
    }
    module.world_size = module.size = size;
    module.world_rank = module.self = (uint32_t) ompi_comm_rank(&ompi_mpi_comm_world.comm);
    config = ompi_comm_ft_wiring_config();
    /* before anything is set up: what the user set must pass the core */
    if (OMPI_SUCCESS != (ret = ompi_comm_ft_detector_params_check(&config))
        || OMPI_SUCCESS != (ret = ompi_comm_ft_union_init(OMPI_PROC_MY_NAME->jobid, size))) {
        return ret;
    }
    if (NULL == (module.known_failed = calloc(size, sizeof(*module.known_failed)))) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    ompi_comm_ft_conclusions_init(module.params.fence, module.params.counters,
                                  module.params.detector.timeout_ns);
    ompi_comm_ft_conclusions_track(module.size, module.self, module.known_failed);
    if (size < 2) {
        return stand_by();
    }
    if (OMPI_SUCCESS != (ret = start_transport(&config, handle, sizeof(handle)))) {
        goto failed;
    }
    config.node_of_rank = module.nodes;
    if (OMPI_SUCCESS != (ret = ompi_comm_ft_wiring_create_core(&config))) {
        stop_transport();
        goto failed;
    }
    module.active = true;
    ompi_comm_ft_wiring_register_pvar();
    opal_output_verbose(2, ompi_ftmpi_output_handle,
                        "%s btl_ft: detector on, period %.6f s, timeout %.6f s, %s, over %s",
                        OMPI_NAME_PRINT(OMPI_PROC_MY_NAME), module.params.detector.period_ns / 1e9,
                        module.params.detector.timeout_ns / 1e9,
                        module.params.use_thread ? "in a thread" : "from progress",
                        module.over_ucx ? "its own UCX context" : "the application's BTLs");
    return OMPI_SUCCESS;
failed:
    free(module.nodes);
    module.nodes = NULL;
    free(module.known_failed);
    module.known_failed = NULL;
    ompi_comm_ft_union_fini();
    return ret;
}

/* A process of this node, named by its rank in this job, ended (the node
 * watch): the core knows it by its rank in the union. */
static void report_job_rank(uint32_t job_rank, int kind)
{
    opal_process_name_t name = {.jobid = OMPI_PROC_MY_NAME->jobid, .vpid = job_rank};
    uint32_t rank;

    if (ompi_comm_ft_union_rank_of(&name, &rank)) {
        ompi_comm_ft_driver_report(rank, kind);
    }
}

/* The witness knows processes by name. */
static int local_state(void *context, uint32_t rank)
{
    opal_process_name_t name = ompi_comm_ft_union_name_of(rank);

    return ompi_comm_ft_witness_local_state(&name);
}

int ompi_comm_failure_detector_start(void)
{
    if (!module.active) {
        return OMPI_SUCCESS;
    }
    if (knows_node_processes()) {
        ompi_comm_ft_witness_learn(module.nodes, module.world_size, module.world_rank);
    }
    if (ompi_comm_ft_wiring_watches_node()) {
        ompi_comm_ft_witness_watch_ends(ompi_comm_ft_driver_watch, report_job_rank);
    }
    free(module.nodes); /* the core and the transport keep their own copies */
    module.nodes = NULL;
    if (module.over_ucx) {
        ompi_comm_ft_ucx_connect(true);
    } else {
        ompi_comm_ft_btl_make_endpoints();
    }
    return ompi_comm_ft_driver_start();
}

/* The union ranks of this job's other processes (free it), in a union of
 * several jobs: MPI_Finalize's shrink and barrier over MPI_COMM_WORLD bring
 * them here together, and they leave the others' ring together. */
static uint32_t *job_mates(size_t *count)
{
    uint32_t *mates = NULL, rank;
    opal_process_name_t name = *OMPI_PROC_MY_NAME;

    *count = 0;
    if (0 == ompi_comm_ft_union_epoch() || NULL == (mates = malloc(module.world_size * sizeof(*mates)))) {
        return NULL;
    }
    for (name.vpid = 0; name.vpid < module.world_size; ++name.vpid) {
        if (name.vpid != module.world_rank && ompi_comm_ft_union_rank_of(&name, &rank)) {
            mates[(*count)++] = rank;
        }
    }
    return mates;
}

int ompi_comm_failure_detector_finalize(void)
{
    uint32_t *leaving;
    size_t leaving_count;

    if (!module.active && !module.standby) {
        return OMPI_SUCCESS;
    }
    ompi_comm_ft_witness_leaving(); /* before anything that could end this process */
    module.active = module.standby = false;
    leaving = job_mates(&leaving_count);
    ompi_comm_ft_driver_finalize(false, leaving, leaving_count, NULL);
    free(leaving);
    stop_transport();
    ompi_comm_ft_witness_finalize();
    ompi_comm_ft_union_fini();
    free(module.nodes);
    module.nodes = NULL;
    free(module.known_failed);
    module.known_failed = NULL;
    return OMPI_SUCCESS;
}

/* Pinned: a JOIN may renumber the union meanwhile (comm_ft_detector_join.c). */
static void report(const struct ompi_proc_t *proc, int kind)
{
    const opal_process_name_t *name = &proc->super.proc_name;
    uint32_t rank;

    if (!module.active) {
        return;
    }
    ompi_comm_ft_union_pin();
    if (ompi_comm_ft_union_rank_of(name, &rank)) {
        opal_output_verbose(2, ompi_ftmpi_output_handle, "%s btl_ft: %s reported %s",
                            OMPI_NAME_PRINT(OMPI_PROC_MY_NAME), OMPI_NAME_PRINT(name),
                            BTL_FT_CRASHED == kind ? "ended by the runtime" : "failed by ULFM");
        __atomic_store_n(&module.known_failed[rank], 1, __ATOMIC_RELEASE);
        ompi_comm_ft_driver_report(rank, kind);
    }
    ompi_comm_ft_union_unpin();
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
 * process it believes alive is a member (each of them answered). Members
 * are named by union rank; one outside the union is left out. */
void ompi_comm_failure_detector_shrunk(struct ompi_communicator_t *comm)
{
    int size = ompi_comm_size(comm);
    uint32_t *members, count = 0;

    if (!module.active || OMPI_COMM_IS_INTER(comm)) {
        return;
    }
    if (NULL == (members = malloc(size * sizeof(*members)))) {
        return;
    }
    ompi_comm_ft_union_pin();
    for (int i = 0; i < size; ++i) {
        opal_process_name_t name = ompi_group_get_proc_name(comm->c_local_group, i);
        count += ompi_comm_ft_union_rank_of(&name, &members[count]) ? 1 : 0;
    }
    ompi_comm_ft_driver_shrunk(members, count);
    ompi_comm_ft_union_unpin();
    free(members);
}

/* The BTL path's; start_ucx() replaces the transport's entries. */
static const ompi_comm_ft_driver_ops_t common_ops = {
    .put_heartbeat = ompi_comm_ft_btl_put_heartbeat,
    .send = ompi_comm_ft_btl_send,
    .observer_handle = ompi_comm_ft_btl_observer_handle,
    .local_state = local_state,
    .read_flag = ompi_comm_ft_btl_read_flag,
    .ended = ompi_comm_ft_witness_ended,
    .wait_fd = -1,
    .failed = ompi_comm_ft_conclusions_failed,
    .suspected = ompi_comm_ft_conclusions_suspected,
    .declared_dead_self = ompi_comm_ft_conclusions_declared_dead_self,
    .close_call = ompi_comm_ft_conclusions_close_call,
    .report_counters = ompi_comm_ft_conclusions_report_counters,
    .tell_ulfm = ompi_comm_ft_conclusions_tell_ulfm,
    .pin = ompi_comm_ft_union_pin,
    .unpin = ompi_comm_ft_union_unpin,
    .joined = ompi_comm_ft_join_heard,
    .follow_join = ompi_comm_ft_join_follow,
};
