/*
 * Copyright (c) 2026      The btl_ft authors.  All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * The detector's own transport: a private UCP context, used by nobody but
 * the detector, so that the application's BTLs, and OPAL's locks, never
 * see a second thread (mpi_ft_detector_transport ucx, the default).
 *
 * Two workers. The message worker carries the core's messages as active
 * messages; it is armed before the detector thread sleeps, and its event
 * fd sits in the thread's epoll set, so a message wakes the thread at once.
 * The heartbeat worker carries puts to observers on other nodes and is
 * never armed: what arrives on it is drained in the wakeups the thread
 * takes anyway, at least once a period, so heartbeats wake nobody.
 *
 * The heartbeat flag is a word in a file of the job's session directory
 * (comm_ft_detector_flag.c). An emitter on the observer's node maps the
 * observer's flag and stores each heartbeat word with a plain atomic
 * store: no call into UCX on either side. Across nodes the word is an
 * eager active message to the observer's heartbeat worker, whose handler
 * stores it into the flag: one way, nothing answers it. Where neither is
 * possible, the core sends the word as a HEARTBEAT message.
 *
 * Rejected: ucp_put_nbx across nodes. UCX 1.13's tcp has no put; UCP
 * emulates it with an active message that the target answers, and when
 * the emitter had died the answer failed inside UCX, which aborted the
 * observer ("ucp_put_handler ... Fatal: unexpected error: Endpoint
 * timeout", netns.crash_2nodes). Which transport carries a put is not
 * something UCX 1.13 lets a caller ask, so a native RDMA put (InfiniBand,
 * RoCE) is not used either.
 *
 * Peers on other nodes (by the runtime's node ids) are reached through
 * their network-only addresses, so that UCX never uses shared memory
 * between emulated nodes of one host. Their endpoints are made, and
 * wired up, at MPI_Init, while every peer is healthy
 * (ompi_comm_ft_ucx_connect): UCX 1.13 aborts a process whose endpoint
 * fails while it is still being wired up (ucp_request_send_state_ff's
 * assertion, removed in UCX 1.14; netns.kill_ranks_5nodes), and a notice
 * after a node loss reaches peers never talked to. They use UCX's peer
 * error handling, without which UCX aborts on a dead peer. An error is
 * counted, and the endpoint is no longer used, but it is no evidence for
 * the core: a peer that finished MPI_Finalize and closed its context
 * looks the same, and the connection to a live peer that was being set
 * up failed that way too (netns.crash_notice_2nodes: a live process was
 * declared failed). Failures are found by the heartbeats, the node watch
 * and the runtime.
 *
 * The message endpoints to node-mates are made and wired up at MPI_Init
 * too. Made at first contact, a failure notice waited for UCX's wireup
 * with each node-mate the overlay had never talked to, hop after hop: at
 * 16 ranks on one host the last survivor learnt of a crash after about
 * 7 ms, against 3 ms over the BTL path, whose endpoints exist from
 * MPI_Init (benchmarks/crash).
 *
 * Every process publishes its worker addresses before
 * MPI_Init's modex (patch 0040), so a peer's address is a local lookup.
 * They are read at init for jobs of up to ADDRESSES_AT_INIT_MAX processes,
 * beyond that at first contact. Endpoints are made at first contact, from
 * those bytes: no runtime call, nothing that waits.
 *
 * The workers are used by whichever thread holds the core lock: the
 * detector thread, or an application thread stepping in its place. UCX's
 * tcp connects without blocking here (CONN_NB), so making an endpoint
 * under that lock never waits for a peer.
 *
 * Rejected: one worker for both. A heartbeat from another node needs the
 * target worker's progress; on the armed worker each one would wake its
 * observer once more per period.
 *
 * A job on one node has no heartbeat worker (node-mates store into the
 * flag) and, unless the user chose the transports, only sysv shared
 * memory: UCX's tcp would open a listening socket and an epoll set per
 * worker for peers that do not exist: UCX then holds 8 descriptors, not 19.
 *
 * At a join (comm_ft_detector.c: a spawn or connect made one union of
 * two) the context, its workers and the endpoints to processes already
 * known stay; the new processes' addresses come from what the connect
 * brought (their job's modex), and their endpoints are made as at
 * MPI_Init, but their wireup is not waited for: a new process answers
 * only once its own detector runs, and one that followed a JOIN while the
 * other side of the connect was still in it stopped heartbeating for as
 * long (55 to 71 ms across emulated nodes, netns.spawn_self_at_once_2nodes,
 * with a timeout of 50 ms). A message carries its sender's union's
 * identity (a digest of its jobs and their joining epochs), and a
 * heartbeat word 8 bits of epoch and identity in its top byte: a receiver
 * drops another union's, sent while the processes move, but a JOIN, which
 * names its union in full. A process publishes its flag file's path with
 * its addresses, so a node-mate of another job stores into its flag like
 * one of its own job. A job of one process publishes too, and a spawned
 * job, which may join parents on other nodes, never counts as one node.
 *
 * This file makes the context, makes the endpoints and runs the
 * lifecycle; what each process publishes for the others, and reading it,
 * are comm_ft_detector_ucx_addresses.c's, the heartbeats and messages
 * that travel over the endpoints comm_ft_detector_ucx_path.c's.
 */

#include "ompi_config.h"

#include <inttypes.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "opal/mca/pmix/pmix-internal.h"

#include "ompi/communicator/ft/comm_ft_detector_clock.h"
#include "ompi/communicator/ft/comm_ft_detector_ucx_internal.h"
#include "ompi/constants.h"
#include "ompi/runtime/ompi_rte.h"

/* BTL_FT_UCX_TLS and the like configure this context; UCX_* still apply */
#define UCX_CONFIG_PREFIX "BTL_FT"
/* how long MPI_Init waits for the endpoints to other nodes to be wired up */
#define CONNECT_NS 5000000000LL
/* the longest sleep of a wait (that one, finalize's) between two looks
 * at the workers */
#define NAP_MS 1
#define ADDRESSES_AT_INIT_MAX 4096
/* how long finalize waits for its LEAVE messages to go, and for any one
 * send to complete: a send to a stopped peer never does */
#define FINALIZE_FLUSH_NS 200000000LL
#define FINALIZE_STALL_NS 20000000LL

ucx_transport_t ompi_comm_ft_ucx_state = {.wait_fd = -1};
static ucx_transport_t *const ucx = &ompi_comm_ft_ucx_state;

/*
 * Publishing (before the modex).
 */

/* What this context changes of UCX's defaults; UCX applies the transport
 * settings (the keys without a UCP meaning) to every transport that has
 * them. */
static ucs_status_t configure(ucp_config_t *config, bool one_node)
{
    static const struct {
        const char *key;
        const char *value;
        bool network; /* only where tcp may be used: elsewhere UCX warns of it */
    } settings[] = {
        /* UCX 1.13's tcp connects blocking by default: an endpoint made to
         * a peer across a cut link held the detector thread in connect(2)
         * for minutes (netns.cut_2nodes: MPI_Finalize never returned) */
        {"CONN_NB", "y", true},
        /* the detector sends a few small messages: shared memory's default
         * receive pool (512 buffers of 8 KiB, per worker) was 4 MiB of
         * each process's resident memory */
        {"MM_FIFO_SIZE", "16", false},
        {"MM_RX_BUFS_GROW", "16", false},
        /* every send is eager and small: without this, UCP also opened a
         * tcp connection to each node-mate, for rendezvous never used */
        {"MAX_RNDV_LANES", "0", false},
    };
    bool user_transports = NULL != getenv(UCX_CONFIG_PREFIX "_UCX_TLS") || NULL != getenv("UCX_TLS");
    bool shared_memory_only = one_node && !user_transports;
    ucs_status_t status = UCS_OK;

    for (size_t i = 0; i < sizeof(settings) / sizeof(settings[0]) && UCS_OK == status; ++i) {
        if (!(settings[i].network && shared_memory_only)) {
            status = ucp_config_modify(config, settings[i].key, settings[i].value);
        }
    }
    /* one shared-memory transport is enough for a node-mate's messages (its
     * heartbeats need none), unless the user chose the transports */
    if (UCS_OK == status && !user_transports) {
        status = ucp_config_modify(config, "TLS", one_node ? "sysv" : "^posix,cma,self");
    }
    return status;
}

static ucs_status_t create_context(bool one_node)
{
    ucp_params_t params = {
        .field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED
                      | UCP_PARAM_FIELD_ESTIMATED_NUM_EPS | UCP_PARAM_FIELD_NAME,
        .features = UCP_FEATURE_AM | UCP_FEATURE_WAKEUP,
        .mt_workers_shared = 0,
        .estimated_num_eps = 2,
        .name = "btl_ft",
    };
    ucp_config_t *config;
    ucs_status_t status;

    if (UCS_OK != (status = ucp_config_read(UCX_CONFIG_PREFIX, NULL, &config))) {
        return status;
    }
    if (UCS_OK != (status = configure(config, one_node))) {
        ucp_config_release(config);
        return status;
    }
    status = ucp_init(&params, config, &ucx->context);
    ucp_config_release(config);
    return status;
}

static ucs_status_t create_worker(ucp_worker_h *worker, bool wakes)
{
    ucp_worker_params_t params = {
        .field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
        /* used by whoever holds the core lock, one thread at a time */
        .thread_mode = UCS_THREAD_MODE_SERIALIZED,
    };

    if (wakes) {
        params.field_mask |= UCP_WORKER_PARAM_FIELD_EVENTS;
        params.events = UCP_WAKEUP_RX | UCP_WAKEUP_TX;
    }
    return ucp_worker_create(ucx->context, &params, worker);
}

/* The flag node-mates map, named by this process's rank in its job; a
 * word of our own if the file cannot be made (node-mates then send their
 * heartbeats to the heartbeat worker). */
static void make_flag(uint32_t job_rank)
{
    ucx->flag = ompi_comm_ft_flag_create(job_rank, &ucx->flag_path);
    if (NULL == ucx->flag) {
        ucx->flag = &ucx->own_flag_word;
    }
    *ucx->flag = 0;
}

static void destroy_context(void)
{
    if (NULL != ucx->flag_path) {
        ompi_comm_ft_flag_remove(ucx->flag_path, ucx->flag);
    }
    if (NULL != ucx->hb_worker) {
        ucp_worker_destroy(ucx->hb_worker);
    }
    if (NULL != ucx->am_worker) {
        ucp_worker_destroy(ucx->am_worker);
    }
    if (NULL != ucx->context) {
        ucp_cleanup(ucx->context);
    }
    *ucx = (ucx_transport_t){.wait_fd = -1};
}

int ompi_comm_ft_ucx_publish(uint32_t self, uint32_t size, bool one_node, const char **reason)
{
    ucs_status_t status;

    ucx->self = self;
    ucx->size = size;
    make_flag(self);
    if (UCS_OK != (status = create_context(one_node))
        || UCS_OK != (status = create_worker(&ucx->am_worker, true))
        || (!one_node && UCS_OK != (status = create_worker(&ucx->hb_worker, false)))
        || UCS_OK != (status = ucp_worker_get_efd(ucx->am_worker, &ucx->wait_fd))) {
        *reason = ucs_status_string(status);
        destroy_context();
        return OMPI_ERROR;
    }
    if (OMPI_SUCCESS != ompi_comm_ft_ucx_send_addresses(reason)) {
        destroy_context();
        return OMPI_ERROR;
    }
    return OMPI_SUCCESS;
}

/*
 * Peers' endpoints.
 */

bool ompi_comm_ft_ucx_same_node(uint32_t rank)
{
    return NULL == ucx->node_of_rank || ucx->node_of_rank[rank] == ucx->node_of_rank[ucx->self];
}

/* The argument names the peer, not its rank, which a join may change. */
static void *peer_key(const opal_process_name_t *name)
{
    return (void *) (uintptr_t) (((uint64_t) name->jobid << 32) | name->vpid);
}

static void on_peer_error(void *arg, ucp_ep_h ep, ucs_status_t status)
{
    ++ucx->counters.peer_errors;
    for (uint32_t rank = 0; rank < ucx->size; ++rank) {
        peer_t *peer = &ucx->peers[rank];
        if (peer_key(&peer->name) == arg && !peer->unreachable) {
            peer->unreachable = true;
            ompi_comm_ft_log(2, "btl_ft: ucx: rank %u unreachable: %s", rank, ucs_status_string(status));
        }
    }
}

/* Node-mates by shared memory, everyone else by network only, with UCX's
 * peer error handling. */
ucp_ep_h ompi_comm_ft_ucx_endpoint(ucp_worker_h worker, uint32_t rank, int full_part, int net_part)
{
    bool local = ompi_comm_ft_ucx_same_node(rank);
    ucp_ep_params_t params = {.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS};
    size_t length;
    ucp_ep_h ep = NULL;

    if (!ompi_comm_ft_ucx_read_addresses(rank)) {
        return NULL;
    }
    params.address = ompi_comm_ft_ucx_address_part(&ucx->peers[rank], local ? full_part : net_part, &length);
    if (0 == length) {
        return NULL; /* it has no such worker (a job of one node: no heartbeat worker) */
    }
    if (!local) {
        params.field_mask |= UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE | UCP_EP_PARAM_FIELD_ERR_HANDLER;
        params.err_mode = UCP_ERR_HANDLING_MODE_PEER;
        params.err_handler.cb = on_peer_error;
        params.err_handler.arg = peer_key(&ucx->peers[rank].name);
    }
    if (UCS_OK != ucp_ep_create(worker, &params, &ep)) {
        ompi_comm_ft_log(5, "btl_ft: ucx: no endpoint to rank %u", rank);
        return NULL;
    }
    return ep;
}

bool ompi_comm_ft_ucx_reaches_other_nodes(void)
{
    return NULL != ucx->hb_worker; /* made only where the job spans nodes, or may join one that does */
}

/* Closes without waiting for the peer: at finalize, or a peer in error. */
static void close_endpoint(ucp_worker_h worker, ucp_ep_h ep)
{
    ucp_request_param_t param = {.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS, .flags = UCP_EP_CLOSE_FLAG_FORCE};
    void *request;

    if (NULL == ep) {
        return;
    }
    request = ucp_ep_close_nbx(ep, &param);
    if (UCS_PTR_IS_PTR(request)) {
        while (UCS_INPROGRESS == ucp_request_check_status(request)) {
            ucp_worker_progress(worker);
        }
        ucp_request_free(request);
    }
}

/*
 * Lifecycle after the modex.
 */

static void hello_sent(void *request, ucs_status_t status, void *user_data)
{
    --ucx->hellos_in_flight;
    ucp_request_free(request);
}

static void say_hello(ucp_ep_h ep)
{
    ucp_request_param_t param = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_FLAGS,
        .cb.send = hello_sent,
        .flags = UCP_AM_SEND_FLAG_EAGER,
    };
    void *request;

    if (NULL == ep) {
        return;
    }
    request = ucp_am_send_nbx(ep, HELLO_AM_ID, NULL, 0, NULL, 0, &param);
    if (UCS_PTR_IS_PTR(request)) {
        ++ucx->hellos_in_flight;
    }
}

/* Until the message worker has an event (a peer's wireup or answer, a
 * send's completion), or NAP_MS, for the heartbeat worker's, which has no
 * event fd in use. The wait used to spin: in a run of two respawn jobs at once on
 * 2 cores, a process ran in user space for over a second at this step
 * (its thread list at each witness question), taking a CPU that a
 * peer's new detector thread, whose progress the wireup needed, had not
 * had yet. */
static void nap_until_event(void)
{
    struct pollfd event = {.fd = ucx->wait_fd, .events = POLLIN};

    if (0 <= ucx->wait_fd && ompi_comm_ft_ucx_arm()) {
        (void) poll(&event, 1, NAP_MS);
    }
}

void ompi_comm_ft_ucx_connect(bool wait_for_wireup)
{
    int64_t deadline = ompi_comm_ft_now_ns() + (wait_for_wireup ? CONNECT_NS : 0);
    uint32_t remote = 0;

    if (NULL == ucx->peers || ucx->size > ADDRESSES_AT_INIT_MAX) {
        return;
    }
    for (uint32_t rank = 0; rank < ucx->size; ++rank) {
        peer_t *peer = &ucx->peers[rank];
        if (rank == ucx->self || NULL != peer->am_ep || peer->unreachable) {
            continue; /* wired up already, before a join */
        }
        peer->am_ep = ompi_comm_ft_ucx_endpoint(ucx->am_worker, rank, PART_AM_FULL, PART_AM_NET);
        say_hello(peer->am_ep);
        if (!ompi_comm_ft_ucx_same_node(rank)) { /* node-mates get stores, made lazily */
            ++remote;
            ompi_comm_ft_ucx_find_heartbeat_path(rank);
            say_hello(peer->hb_ep);
        }
    }
    /* every process does the same now, and answers while it waits; at a
     * join the detector's progress finishes the wireup instead */
    while (0 < ucx->hellos_in_flight && ompi_comm_ft_now_ns() < deadline) {
        ompi_comm_ft_ucx_progress();
        if (0 < ucx->hellos_in_flight) {
            nap_until_event();
        }
    }
    ompi_comm_ft_log(5, "btl_ft: ucx: endpoints to %u processes made (%u of other nodes), %d %s",
                     ucx->size - 1, remote, ucx->hellos_in_flight,
                     wait_for_wireup ? "not wired up in time" : "being wired up");
}

/* Every peer must have published: a process whose UCX could not start
 * takes the BTL path, and so must everyone else. */
static bool read_every_blob(void)
{
    if (ucx->size > ADDRESSES_AT_INIT_MAX) {
        return true; /* read at first contact */
    }
    for (uint32_t rank = 0; rank < ucx->size; ++rank) {
        if (rank != ucx->self && !ompi_comm_ft_ucx_read_addresses(rank)) {
            ompi_comm_ft_log(1, "btl_ft: ucx: rank %u published no address", rank);
            return false;
        }
    }
    return true;
}

static void free_peers(void)
{
    for (uint32_t rank = 0; NULL != ucx->peers && rank < ucx->size; ++rank) {
        free(ucx->peers[rank].blob);
    }
    free(ucx->peers);
    ucx->peers = NULL;
    free(ucx->node_of_rank);
    ucx->node_of_rank = NULL;
}

int ompi_comm_ft_ucx_init(bool rdma_heartbeat, const uint32_t *node_of_rank,
                          ompi_comm_ft_deliver_fn_t deliver, size_t *max_message_bytes,
                          const char **reason)
{
    if (NULL == ucx->context) {
        *reason = "it did not start";
        return OMPI_ERROR;
    }
    ucx->rdma_heartbeat = rdma_heartbeat;
    ucx->deliver = deliver;
    ucx->max_message_bytes = BTL_FT_MESSAGE_MAX_BYTES;
    ucx->peers = calloc(ucx->size, sizeof(*ucx->peers));
    for (uint32_t rank = 0; NULL != ucx->peers && rank < ucx->size; ++rank) {
        ucx->peers[rank].name = (opal_process_name_t){.jobid = OMPI_PROC_MY_NAME->jobid, .vpid = rank};
    }
    if (NULL != node_of_rank && NULL != (ucx->node_of_rank = malloc(ucx->size * sizeof(uint32_t)))) {
        memcpy(ucx->node_of_rank, node_of_rank, ucx->size * sizeof(uint32_t));
    }
    if (NULL == ucx->peers || (NULL != node_of_rank && NULL == ucx->node_of_rank)) {
        *reason = "out of memory";
    } else if (!read_every_blob()) {
        *reason = "a peer published no address";
    } else if (OMPI_SUCCESS != ompi_comm_ft_ucx_set_handlers()) {
        *reason = "no active-message handler";
    } else {
        *max_message_bytes = ucx->max_message_bytes;
        return OMPI_SUCCESS;
    }
    free_peers();
    destroy_context();
    return OMPI_ERROR;
}

static void close_peer(peer_t *peer)
{
    ompi_comm_ft_flag_unmap(peer->mapped_flag);
    close_endpoint(ucx->hb_worker, peer->hb_ep);
    close_endpoint(ucx->am_worker, peer->am_ep);
    free(peer->blob);
    *peer = (peer_t){.name = peer->name};
}

/* Lets the LEAVE messages go, for a bounded time: a peer that is gone
 * must not hold this process in MPI_Finalize. Between looks it naps, as
 * the wireup wait does: a send to another node completes only when its
 * peer's tcp takes it, and spinning would take the CPU that peer may need. */
static void flush_sends(void)
{
    int64_t now = ompi_comm_ft_now_ns(), deadline = now + FINALIZE_FLUSH_NS, moved = now;
    int in_flight = ucx->sends_in_flight;

    while (0 < ucx->sends_in_flight && now < deadline && now - moved < FINALIZE_STALL_NS) {
        ompi_comm_ft_ucx_progress();
        if (0 < ucx->sends_in_flight) {
            nap_until_event();
        }
        now = ompi_comm_ft_now_ns();
        if (ucx->sends_in_flight != in_flight) {
            in_flight = ucx->sends_in_flight;
            moved = now;
        }
    }
}

/* The old union's peers that the new one keeps (previous[rank] their
 * old rank, UINT32_MAX for a process new to it) keep their addresses and
 * endpoints; the others are closed. */
static peer_t *carry_peers(uint32_t size, const opal_process_name_t *names, const uint32_t *previous)
{
    peer_t *peers = calloc(size, sizeof(*peers));
    uint8_t *kept = calloc(ucx->size, 1);

    if (NULL == peers || NULL == kept) {
        free(peers);
        free(kept);
        return NULL;
    }
    for (uint32_t rank = 0; rank < size; ++rank) {
        if (previous[rank] < ucx->size) {
            peers[rank] = ucx->peers[previous[rank]];
            kept[previous[rank]] = 1;
        }
        peers[rank].name = names[rank];
    }
    for (uint32_t rank = 0; rank < ucx->size; ++rank) {
        if (!kept[rank]) {
            close_peer(&ucx->peers[rank]);
        }
    }
    free(kept);
    return peers;
}

static uint8_t fold_to_nibble(uint64_t bits)
{
    for (int width = 32; width >= 4; width /= 2) {
        bits ^= bits >> width;
    }
    return (uint8_t) (bits & 0xf);
}

int ompi_comm_ft_ucx_join(uint32_t self, uint32_t size, uint32_t epoch, uint64_t identity,
                          const opal_process_name_t *names,
                          const uint32_t *previous, const uint32_t *node_of_rank,
                          const btl_ft_known_failure_t *failed, size_t failed_count)
{
    uint32_t *nodes = NULL;
    peer_t *peers;

    if (NULL == ucx->context || NULL == ucx->peers) {
        return OMPI_ERR_NOT_AVAILABLE;
    }
    if (NULL != node_of_rank && NULL == (nodes = malloc(size * sizeof(*nodes)))) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    /* No progress until the next detector runs: what arrived meanwhile
     * would have no queue, or the last union's numbers (a JOIN, or a LEAVE
     * taken for one of the next union: a process that later failed was
     * never reported). The last union's sends carry its tag already. */
    if (NULL == (peers = carry_peers(size, names, previous))) {
        free(nodes);
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    if (NULL != nodes) {
        memcpy(nodes, node_of_rank, size * sizeof(*nodes));
    }
    free(ucx->peers);
    free(ucx->node_of_rank);
    ucx->peers = peers;
    ucx->node_of_rank = nodes;
    ucx->self = self;
    ucx->size = size;
    /* the identity tells a union from any other (it digests each job's
     * joining epoch); a word's 4 bits of it are folded from all 64 */
    ucx->frame_tag = identity;
    ucx->word_tag = (uint8_t) (((epoch & 0xf) << 4) | fold_to_nibble(identity));
    ucx->last_epoch_word = 0;
    /* nothing is sent to a process known failed: a hello to one would hold
     * connect() until its deadline */
    for (size_t i = 0; i < failed_count; ++i) {
        peers[failed[i].rank].unreachable = true;
    }
    for (uint32_t rank = 0; rank < size; ++rank) {
        if (peers[rank].unreachable) {
            continue;
        }
        if (rank != self && !ompi_comm_ft_ucx_read_addresses(rank)) {
            /* its UCX did not start: unreachable here, found by its silence */
            ompi_comm_ft_log(1, "btl_ft: ucx: %s published no address", OMPI_NAME_PRINT(&names[rank]));
            peers[rank].unreachable = true;
        }
    }
    return OMPI_SUCCESS;
}

static void report_counters(void)
{
    const ucx_counters_t *c = &ucx->counters;

    ompi_comm_ft_log(5, "btl_ft: heartbeats over ucx: %" PRIu64 " stored into a mapped flag, %" PRIu64
                     " sent to the heartbeat worker (%" PRIu64 " completed, %" PRIu64
                     " skipped while words were in flight), %" PRIu64 " by active message (%" PRIu64
                     " of them to an observer found unreachable); %" PRIu64
                     " received on the heartbeat worker; %" PRIu64
                     " new words read from the local flag; messages: %" PRIu64
                     " sent, %" PRIu64 " received, %" PRIu64 " dropped, %" PRIu64 " malformed; %" PRIu64
                     " of another union dropped; %" PRIu64 " peer errors",
                     c->heartbeats_stored, c->heartbeats_sent, c->heartbeats_sent_completed,
                     c->heartbeats_skipped, c->heartbeats_as_messages, c->heartbeats_to_unreachable,
                     c->heartbeats_received,
                     c->flag_words_seen,
                     c->messages_sent, c->messages_received, c->messages_dropped, c->frames_malformed,
                     c->other_epoch_dropped, c->peer_errors);
}

void ompi_comm_ft_ucx_finalize(void)
{
    if (NULL == ucx->context) {
        return;
    }
    if (NULL != ucx->peers) {
        flush_sends();
        report_counters();
        for (uint32_t rank = 0; rank < ucx->size; ++rank) {
            close_peer(&ucx->peers[rank]);
        }
    }
    free_peers();
    destroy_context();
}
