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
 */

#include "ompi_config.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ucp/api/ucp.h>

#include "opal/mca/pmix/pmix-internal.h"

#include "ompi/communicator/ft/comm_ft_detector.h"
#include "ompi/constants.h"
#include "ompi/runtime/ompi_rte.h"

/* BTL_FT_UCX_TLS and the like configure this context; UCX_* still apply */
#define UCX_CONFIG_PREFIX "BTL_FT"
#define MODEX_KEY "btl_ft.ucx"
#define BLOB_VERSION 2
#define AM_ID 0           /* the core's messages, on the message worker */
#define HEARTBEAT_AM_ID 1 /* heartbeat words, on the heartbeat worker */
#define HELLO_AM_ID 2     /* wires an endpoint up at MPI_Init; ignored */
/* how long MPI_Init waits for the endpoints to other nodes to be wired up */
#define CONNECT_NS 5000000000LL
#define FRAME_KIND_MESSAGE 0
#define WORD_SOURCE_SLOTS 16
/* heartbeat words still in flight when the next one is due: beyond this
 * the observer is not taking them, and one more would only queue */
#define WORDS_IN_FLIGHT_MAX 4
#define ADDRESSES_AT_INIT_MAX 4096
/* how long finalize waits for its LEAVE messages to go, and for any one
 * send to complete: a send to a stopped peer never does */
#define FINALIZE_FLUSH_NS 200000000LL
#define FINALIZE_STALL_NS 20000000LL
#define NS_PER_S 1000000000LL

enum { PART_AM_FULL, PART_AM_NET, PART_HB_FULL, PART_HB_NET, PARTS };

/* What each process publishes, followed by its parts in order. */
typedef struct blob_header_t {
    uint32_t version;
    uint32_t lengths[PARTS];
} blob_header_t;

/* Prefix of every detector message, as on the BTL path. */
typedef struct frame_header_t {
    uint8_t kind;
    uint8_t pad[3];
    uint32_t from;
} frame_header_t;

typedef struct peer_t {
    unsigned char *blob; /* NULL: not read */
    ucp_ep_h am_ep;
    ucp_ep_h hb_ep;
    volatile uint64_t *mapped_flag; /* its flag, mapped into this process */
    bool heartbeat_path_known;
    bool unreachable; /* a peer error: nothing more is sent */
} peer_t;

typedef struct ucx_counters_t {
    uint64_t heartbeats_stored; /* into a mapped flag */
    uint64_t heartbeats_sent;   /* to the observer's heartbeat worker */
    uint64_t heartbeats_sent_completed;
    uint64_t heartbeats_as_messages;
    uint64_t heartbeats_skipped; /* sends still in flight */
    uint64_t heartbeats_received; /* on this heartbeat worker */
    uint64_t messages_sent;
    uint64_t messages_dropped;
    uint64_t messages_received;
    uint64_t frames_malformed;
    uint64_t flag_words_seen;
    uint64_t peer_errors;
} ucx_counters_t;

typedef struct ucx_transport_t {
    ucp_context_h context;
    ucp_worker_h am_worker;
    ucp_worker_h hb_worker;
    volatile uint64_t *flag;
    bool flag_in_file; /* else own_flag_word: node-mates cannot map it */
    uint64_t own_flag_word;
    int wait_fd;

    uint32_t self;
    uint32_t size;
    bool rdma_heartbeat;
    uint32_t *node_of_rank; /* NULL: one node */
    peer_t *peers;
    ompi_comm_ft_deliver_fn_t deliver;
    size_t max_message_bytes;
    int hellos_in_flight;

    uint64_t word_source[WORD_SOURCE_SLOTS];
    unsigned word_source_next;
    int words_in_flight;
    int sends_in_flight;
    uint64_t last_flag_word;
    ucx_counters_t counters;
} ucx_transport_t;

static ucx_transport_t ucx = {.wait_fd = -1};

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * NS_PER_S + ts.tv_nsec;
}

/*
 * Publishing (before the modex).
 */

/* What this context changes of UCX's defaults; UCX applies the transport
 * settings (the keys without a UCP meaning) to every transport that has
 * them. */
static ucs_status_t configure(ucp_config_t *config)
{
    static const struct {
        const char *key;
        const char *value;
    } settings[] = {
        /* UCX 1.13's tcp connects blocking by default: an endpoint made to
         * a peer across a cut link held the detector thread in connect(2)
         * for minutes (netns.cut_2nodes: MPI_Finalize never returned) */
        {"CONN_NB", "y"},
        /* the detector sends a few small messages: shared memory's default
         * receive pool (512 buffers of 8 KiB, per worker) was 4 MiB of
         * each process's resident memory */
        {"MM_FIFO_SIZE", "16"},
        {"MM_RX_BUFS_GROW", "16"},
    };
    ucs_status_t status = UCS_OK;

    for (size_t i = 0; i < sizeof(settings) / sizeof(settings[0]) && UCS_OK == status; ++i) {
        status = ucp_config_modify(config, settings[i].key, settings[i].value);
    }
    /* one shared-memory transport is enough for a node-mate's messages (its
     * heartbeats need none), unless the user chose the transports */
    if (UCS_OK == status && NULL == getenv(UCX_CONFIG_PREFIX "_UCX_TLS") && NULL == getenv("UCX_TLS")) {
        status = ucp_config_modify(config, "TLS", "^posix,cma,self");
    }
    return status;
}

static ucs_status_t create_context(void)
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
    if (UCS_OK != (status = configure(config))) {
        ucp_config_release(config);
        return status;
    }
    status = ucp_init(&params, config, &ucx.context);
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
    return ucp_worker_create(ucx.context, &params, worker);
}

/* The flag node-mates map; a word of our own if the file cannot be made
 * (node-mates then send their heartbeats to the heartbeat worker). */
static void make_flag(void)
{
    ucx.flag = ompi_comm_ft_flag_create(ucx.self);
    ucx.flag_in_file = NULL != ucx.flag;
    if (!ucx.flag_in_file) {
        ucx.flag = &ucx.own_flag_word;
    }
    *ucx.flag = 0;
}

/* A worker's address, all of it or its network part only; release with
 * ucp_worker_release_address. */
static ucs_status_t worker_address(ucp_worker_h worker, bool network_only, ucp_address_t **address,
                                   size_t *length)
{
    ucp_worker_attr_t attr = {
        .field_mask = UCP_WORKER_ATTR_FIELD_ADDRESS | UCP_WORKER_ATTR_FIELD_ADDRESS_FLAGS,
        .address_flags = network_only ? UCP_WORKER_ADDRESS_FLAG_NET_ONLY : 0,
    };
    ucs_status_t status = ucp_worker_query(worker, &attr);

    *address = UCS_OK == status ? attr.address : NULL;
    *length = UCS_OK == status ? attr.address_length : 0;
    return status;
}

/* The worker whose address a part of the blob is. */
static ucp_worker_h worker_of(int part)
{
    return part < PART_HB_FULL ? ucx.am_worker : ucx.hb_worker;
}

/* The header and the parts, in one allocation (free it). */
static ucs_status_t pack_blob(unsigned char **blob, size_t *blob_length)
{
    void *parts[PARTS] = {NULL};
    size_t lengths[PARTS] = {0}, total = sizeof(blob_header_t);
    blob_header_t header = {.version = BLOB_VERSION};
    ucs_status_t status = UCS_OK;
    unsigned char *at;

    for (int i = 0; i < PARTS && UCS_OK == status; ++i) {
        status = worker_address(worker_of(i), PART_AM_NET == i || PART_HB_NET == i,
                                (ucp_address_t **) &parts[i], &lengths[i]);
        header.lengths[i] = (uint32_t) lengths[i];
        total += lengths[i];
    }
    if (UCS_OK == status && NULL == (*blob = malloc(total))) {
        status = UCS_ERR_NO_MEMORY;
    }
    if (UCS_OK == status) {
        memcpy(*blob, &header, sizeof(header));
        at = *blob + sizeof(header);
        for (int i = 0; i < PARTS; ++i) {
            memcpy(at, parts[i], lengths[i]);
            at += lengths[i];
        }
        *blob_length = total;
    }
    for (int i = 0; i < PARTS; ++i) {
        if (NULL != parts[i]) {
            ucp_worker_release_address(worker_of(i), parts[i]);
        }
    }
    return status;
}

static void destroy_context(void)
{
    if (ucx.flag_in_file) {
        ompi_comm_ft_flag_remove(ucx.self, ucx.flag);
    }
    if (NULL != ucx.hb_worker) {
        ucp_worker_destroy(ucx.hb_worker);
    }
    if (NULL != ucx.am_worker) {
        ucp_worker_destroy(ucx.am_worker);
    }
    if (NULL != ucx.context) {
        ucp_cleanup(ucx.context);
    }
    ucx = (ucx_transport_t){.wait_fd = -1};
}

int ompi_comm_ft_ucx_publish(uint32_t self, uint32_t size, const char **reason)
{
    unsigned char *blob = NULL;
    size_t blob_length = 0;
    ucs_status_t status;
    int rc;

    ucx.self = self;
    ucx.size = size;
    make_flag();
    if (UCS_OK != (status = create_context()) || UCS_OK != (status = create_worker(&ucx.am_worker, true))
        || UCS_OK != (status = create_worker(&ucx.hb_worker, false))
        || UCS_OK != (status = ucp_worker_get_efd(ucx.am_worker, &ucx.wait_fd))
        || UCS_OK != (status = pack_blob(&blob, &blob_length))) {
        *reason = ucs_status_string(status);
        destroy_context();
        return OMPI_ERROR;
    }
    OPAL_MODEX_SEND_STRING(rc, PMIX_GLOBAL, MODEX_KEY, blob, blob_length);
    free(blob); /* the runtime keeps its copy */
    if (PMIX_SUCCESS == rc) {
        rc = PMIx_Commit(); /* the components' data went before: ours must join it */
    }
    if (PMIX_SUCCESS != rc) {
        *reason = "the runtime did not take its addresses";
        destroy_context();
        return OMPI_ERROR;
    }
    return OMPI_SUCCESS;
}

/*
 * Peers' addresses and endpoints.
 */

static bool same_node(uint32_t rank)
{
    return NULL == ucx.node_of_rank || ucx.node_of_rank[rank] == ucx.node_of_rank[ucx.self];
}

/* The bytes of one part of a peer's blob, checked against its length. */
static const void *blob_part(const peer_t *peer, int part, size_t *length)
{
    blob_header_t header;
    size_t offset = sizeof(header);

    memcpy(&header, peer->blob, sizeof(header));
    for (int i = 0; i < part; ++i) {
        offset += header.lengths[i];
    }
    *length = header.lengths[part];
    return peer->blob + offset;
}

static bool blob_valid(const unsigned char *blob, size_t length)
{
    blob_header_t header;
    size_t total = sizeof(header);

    if (NULL == blob || length < sizeof(header)) {
        return false;
    }
    memcpy(&header, blob, sizeof(header));
    for (int i = 0; i < PARTS; ++i) {
        total += header.lengths[i];
    }
    return BLOB_VERSION == header.version && total == length;
}

/* A local lookup: the modex brought every peer's data. */
static bool read_blob(uint32_t rank)
{
    opal_process_name_t name = *OMPI_PROC_MY_NAME;
    peer_t *peer = &ucx.peers[rank];
    unsigned char *blob = NULL;
    size_t length = 0;
    int rc;

    if (NULL != peer->blob) {
        return true;
    }
    name.vpid = rank;
    OPAL_MODEX_RECV_STRING(rc, MODEX_KEY, &name, (void **) &blob, &length);
    if (PMIX_SUCCESS != rc || !blob_valid(blob, length)) {
        free(blob);
        return false;
    }
    peer->blob = blob;
    return true;
}

static void on_peer_error(void *arg, ucp_ep_h ep, ucs_status_t status)
{
    uint32_t rank = (uint32_t) (uintptr_t) arg;

    ++ucx.counters.peer_errors;
    if (ucx.peers[rank].unreachable) {
        return;
    }
    ucx.peers[rank].unreachable = true;
    ompi_comm_ft_log(2, "btl_ft: ucx: rank %u unreachable: %s", rank, ucs_status_string(status));
}

/* Node-mates by shared memory, everyone else by network only, with UCX's
 * peer error handling. */
static ucp_ep_h make_endpoint(ucp_worker_h worker, uint32_t rank, int full_part, int net_part)
{
    bool local = same_node(rank);
    ucp_ep_params_t params = {.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS};
    size_t length;
    ucp_ep_h ep = NULL;

    if (!read_blob(rank)) {
        return NULL;
    }
    params.address = blob_part(&ucx.peers[rank], local ? full_part : net_part, &length);
    if (!local) {
        params.field_mask |= UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE | UCP_EP_PARAM_FIELD_ERR_HANDLER;
        params.err_mode = UCP_ERR_HANDLING_MODE_PEER;
        params.err_handler.cb = on_peer_error;
        params.err_handler.arg = (void *) (uintptr_t) rank;
    }
    if (UCS_OK != ucp_ep_create(worker, &params, &ep)) {
        ompi_comm_ft_log(5, "btl_ft: ucx: no endpoint to rank %u", rank);
        return NULL;
    }
    return ep;
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

/* How heartbeats reach this observer: its flag mapped here, or a message
 * to its heartbeat worker. */
static void find_heartbeat_path(uint32_t observer)
{
    peer_t *peer = &ucx.peers[observer];

    peer->heartbeat_path_known = true;
    if (same_node(observer) && NULL != (peer->mapped_flag = ompi_comm_ft_flag_map(observer))) {
        ompi_comm_ft_log(5, "btl_ft: ucx: heartbeats to rank %u by store into its mapped flag",
                         observer);
        return;
    }
    if (NULL == (peer->hb_ep = make_endpoint(ucx.hb_worker, observer, PART_HB_FULL, PART_HB_NET))) {
        return;
    }
    ompi_comm_ft_log(5, "btl_ft: ucx: heartbeats to rank %u by message to its heartbeat worker",
                     observer);
}

/*
 * The core's transport callbacks, core lock held.
 */

static void word_sent(void *request, ucs_status_t status, void *user_data)
{
    --ucx.words_in_flight;
    if (UCS_OK == status) {
        ++ucx.counters.heartbeats_sent_completed;
    }
    ucp_request_free(request);
}

/* The word lives in a slot until its send completes; a slot is reused
 * WORD_SOURCE_SLOTS heartbeats later, and at most WORDS_IN_FLIGHT_MAX wait. */
static int send_word(peer_t *peer, uint64_t word)
{
    uint64_t *source = &ucx.word_source[ucx.word_source_next++ % WORD_SOURCE_SLOTS];
    ucp_request_param_t param = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_FLAGS,
        .cb.send = word_sent,
        .flags = UCP_AM_SEND_FLAG_EAGER,
    };
    void *request;

    if (ucx.words_in_flight >= WORDS_IN_FLIGHT_MAX) {
        ++ucx.counters.heartbeats_skipped;
        return 0; /* the core counts the gap */
    }
    *source = word;
    request = ucp_am_send_nbx(peer->hb_ep, HEARTBEAT_AM_ID, NULL, 0, source, sizeof(*source), &param);
    if (UCS_PTR_IS_ERR(request)) {
        return -1;
    }
    ++ucx.counters.heartbeats_sent;
    if (NULL == request) {
        ++ucx.counters.heartbeats_sent_completed;
    } else {
        ++ucx.words_in_flight;
    }
    return 0;
}

int ompi_comm_ft_ucx_put_heartbeat(void *context, uint32_t observer, uint64_t word)
{
    peer_t *peer;

    if (observer >= ucx.size || observer == ucx.self || !ucx.rdma_heartbeat) {
        ++ucx.counters.heartbeats_as_messages;
        return -1;
    }
    peer = &ucx.peers[observer];
    if (!peer->heartbeat_path_known) {
        find_heartbeat_path(observer);
    }
    if (NULL != peer->mapped_flag) {
        __atomic_store_n(peer->mapped_flag, word, __ATOMIC_RELEASE);
        ++ucx.counters.heartbeats_stored;
        return 0;
    }
    if (NULL != peer->hb_ep && !peer->unreachable && 0 == send_word(peer, word)) {
        return 0;
    }
    ++ucx.counters.heartbeats_as_messages;
    return -1;
}

static void send_done(void *request, ucs_status_t status, void *user_data)
{
    --ucx.sends_in_flight;
    if (UCS_OK != status) {
        ++ucx.counters.messages_dropped;
    }
    free(user_data);
    ucp_request_free(request);
}

/* The frame is copied: UCX may hold it until the send completes. */
void ompi_comm_ft_ucx_send(void *context, uint32_t peer_rank, const void *bytes, size_t length)
{
    frame_header_t header = {.kind = FRAME_KIND_MESSAGE, .from = ucx.self};
    ucp_request_param_t param = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_FLAGS,
        .cb.send = send_done,
        .flags = UCP_AM_SEND_FLAG_EAGER,
    };
    peer_t *peer;
    unsigned char *frame;
    void *request;

    if (peer_rank >= ucx.size || peer_rank == ucx.self || length > ucx.max_message_bytes) {
        return;
    }
    peer = &ucx.peers[peer_rank];
    if (NULL == peer->am_ep && !peer->unreachable) {
        peer->am_ep = make_endpoint(ucx.am_worker, peer_rank, PART_AM_FULL, PART_AM_NET);
    }
    if (NULL == peer->am_ep || peer->unreachable
        || NULL == (frame = malloc(sizeof(header) + length))) {
        ++ucx.counters.messages_dropped;
        return;
    }
    memcpy(frame, &header, sizeof(header));
    memcpy(frame + sizeof(header), bytes, length);
    param.user_data = frame;
    request = ucp_am_send_nbx(peer->am_ep, AM_ID, frame, sizeof(header), frame + sizeof(header),
                              length, &param);
    if (UCS_PTR_IS_PTR(request)) {
        ++ucx.sends_in_flight;
    } else {
        free(frame);
    }
    if (UCS_PTR_IS_ERR(request)) {
        ++ucx.counters.messages_dropped;
        ompi_comm_ft_log(5, "btl_ft: ucx: send to rank %u failed: %s", peer_rank,
                         ucs_status_string(UCS_PTR_STATUS(request)));
        return;
    }
    ++ucx.counters.messages_sent;
}

/* The flag handle travels in the modex on this path, not in NEWOBSERVER. */
void ompi_comm_ft_ucx_observer_handle(void *context, uint32_t observer, const void *handle,
                                      size_t length)
{
}

/* Runs inside ucp_worker_progress, core lock held: check, then queue. */
static ucs_status_t on_message(void *arg, const void *header_bytes, size_t header_length,
                               void *data, size_t length, const ucp_am_recv_param_t *param)
{
    frame_header_t header;

    if (sizeof(header) != header_length || (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV)
        || length > ucx.max_message_bytes) {
        ++ucx.counters.frames_malformed;
        return UCS_OK;
    }
    memcpy(&header, header_bytes, sizeof(header));
    if (FRAME_KIND_MESSAGE != header.kind || header.from >= ucx.size) {
        ++ucx.counters.frames_malformed;
        return UCS_OK;
    }
    ++ucx.counters.messages_received;
    ucx.deliver(header.from, data, length);
    return UCS_OK;
}

/* A heartbeat word from an emitter on another node, on the heartbeat
 * worker: into the flag, as a node-mate's store would put it. */
static ucs_status_t on_heartbeat(void *arg, const void *header, size_t header_length, void *data,
                                 size_t length, const ucp_am_recv_param_t *param)
{
    uint64_t word;

    if (sizeof(word) != length || (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV)) {
        ++ucx.counters.frames_malformed;
        return UCS_OK;
    }
    memcpy(&word, data, sizeof(word));
    __atomic_store_n(ucx.flag, word, __ATOMIC_RELEASE);
    ++ucx.counters.heartbeats_received;
    return UCS_OK;
}

void ompi_comm_ft_ucx_progress(void)
{
    /* messages first: a LEAVE before the error its sender's exit causes */
    while (0 != ucp_worker_progress(ucx.am_worker)) {
    }
    while (0 != ucp_worker_progress(ucx.hb_worker)) {
    }
}

bool ompi_comm_ft_ucx_arm(void)
{
    return UCS_ERR_BUSY != ucp_worker_arm(ucx.am_worker);
}

int ompi_comm_ft_ucx_wait_fd(void)
{
    return ucx.wait_fd;
}

uint64_t ompi_comm_ft_ucx_read_flag(void)
{
    uint64_t word = __atomic_load_n(ucx.flag, __ATOMIC_ACQUIRE);

    if (word != ucx.last_flag_word) {
        ucx.last_flag_word = word;
        ++ucx.counters.flag_words_seen;
    }
    return word;
}

/*
 * Lifecycle after the modex.
 */

static ucs_status_t on_hello(void *arg, const void *header, size_t header_length, void *data,
                             size_t length, const ucp_am_recv_param_t *param)
{
    return UCS_OK;
}

static void hello_sent(void *request, ucs_status_t status, void *user_data)
{
    --ucx.hellos_in_flight;
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
        ++ucx.hellos_in_flight;
    }
}

void ompi_comm_ft_ucx_connect(void)
{
    int64_t deadline = now_ns() + CONNECT_NS;
    uint32_t remote = 0;

    if (NULL == ucx.peers || ucx.size > ADDRESSES_AT_INIT_MAX) {
        return;
    }
    for (uint32_t rank = 0; rank < ucx.size; ++rank) {
        peer_t *peer = &ucx.peers[rank];
        if (rank == ucx.self || same_node(rank)) {
            continue;
        }
        ++remote;
        peer->am_ep = make_endpoint(ucx.am_worker, rank, PART_AM_FULL, PART_AM_NET);
        find_heartbeat_path(rank);
        say_hello(peer->am_ep);
        say_hello(peer->hb_ep);
    }
    /* every process does the same now, and answers while it waits */
    while (0 < ucx.hellos_in_flight && now_ns() < deadline) {
        ompi_comm_ft_ucx_progress();
    }
    ompi_comm_ft_log(5, "btl_ft: ucx: endpoints to %u processes of other nodes made, %d not wired up "
                     "in time", remote, ucx.hellos_in_flight);
}

static int set_handler(ucp_worker_h worker, unsigned id, ucp_am_recv_callback_t callback)
{
    ucp_am_handler_param_t params = {
        .field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB
                      | UCP_AM_HANDLER_PARAM_FIELD_FLAGS,
        .id = id,
        .cb = callback,
        .flags = UCP_AM_FLAG_WHOLE_MSG,
    };

    return UCS_OK == ucp_worker_set_am_recv_handler(worker, &params) ? OMPI_SUCCESS : OMPI_ERROR;
}

/* Every peer must have published: a process whose UCX could not start
 * takes the BTL path, and so must everyone else. */
static bool read_every_blob(void)
{
    if (ucx.size > ADDRESSES_AT_INIT_MAX) {
        return true; /* read at first contact */
    }
    for (uint32_t rank = 0; rank < ucx.size; ++rank) {
        if (rank != ucx.self && !read_blob(rank)) {
            ompi_comm_ft_log(1, "btl_ft: ucx: rank %u published no address", rank);
            return false;
        }
    }
    return true;
}

static void free_peers(void)
{
    for (uint32_t rank = 0; NULL != ucx.peers && rank < ucx.size; ++rank) {
        free(ucx.peers[rank].blob);
    }
    free(ucx.peers);
    ucx.peers = NULL;
    free(ucx.node_of_rank);
    ucx.node_of_rank = NULL;
}

int ompi_comm_ft_ucx_init(bool rdma_heartbeat, const uint32_t *node_of_rank,
                          ompi_comm_ft_deliver_fn_t deliver, size_t *max_message_bytes,
                          const char **reason)
{
    if (NULL == ucx.context) {
        *reason = "it did not start";
        return OMPI_ERROR;
    }
    ucx.rdma_heartbeat = rdma_heartbeat;
    ucx.deliver = deliver;
    ucx.max_message_bytes = BTL_FT_MESSAGE_MAX_BYTES;
    ucx.peers = calloc(ucx.size, sizeof(*ucx.peers));
    if (NULL != node_of_rank && NULL != (ucx.node_of_rank = malloc(ucx.size * sizeof(uint32_t)))) {
        memcpy(ucx.node_of_rank, node_of_rank, ucx.size * sizeof(uint32_t));
    }
    if (NULL == ucx.peers || (NULL != node_of_rank && NULL == ucx.node_of_rank)) {
        *reason = "out of memory";
    } else if (!read_every_blob()) {
        *reason = "a peer published no address";
    } else if (OMPI_SUCCESS != set_handler(ucx.am_worker, AM_ID, on_message)
               || OMPI_SUCCESS != set_handler(ucx.hb_worker, HEARTBEAT_AM_ID, on_heartbeat)
               || OMPI_SUCCESS != set_handler(ucx.am_worker, HELLO_AM_ID, on_hello)
               || OMPI_SUCCESS != set_handler(ucx.hb_worker, HELLO_AM_ID, on_hello)) {
        *reason = "no active-message handler";
    } else {
        *max_message_bytes = ucx.max_message_bytes;
        return OMPI_SUCCESS;
    }
    free_peers();
    destroy_context();
    return OMPI_ERROR;
}

/* Lets the LEAVE messages go, for a bounded time: a peer that is gone
 * must not hold this process in MPI_Finalize. */
static void flush_sends(void)
{
    int64_t now = now_ns(), deadline = now + FINALIZE_FLUSH_NS, moved = now;
    int in_flight = ucx.sends_in_flight;

    while (0 < ucx.sends_in_flight && now < deadline && now - moved < FINALIZE_STALL_NS) {
        ompi_comm_ft_ucx_progress();
        now = now_ns();
        if (ucx.sends_in_flight != in_flight) {
            in_flight = ucx.sends_in_flight;
            moved = now;
        }
    }
}

static void report_counters(void)
{
    const ucx_counters_t *c = &ucx.counters;

    ompi_comm_ft_log(5, "btl_ft: heartbeats over ucx: %" PRIu64 " stored into a mapped flag, %" PRIu64
                     " sent to the heartbeat worker (%" PRIu64 " completed, %" PRIu64
                     " skipped while words were in flight), %" PRIu64 " by active message; %" PRIu64
                     " received on the heartbeat worker; %" PRIu64
                     " new words read from the local flag; messages: %" PRIu64
                     " sent, %" PRIu64 " received, %" PRIu64 " dropped, %" PRIu64 " malformed; %" PRIu64
                     " peer errors",
                     c->heartbeats_stored, c->heartbeats_sent, c->heartbeats_sent_completed,
                     c->heartbeats_skipped, c->heartbeats_as_messages, c->heartbeats_received,
                     c->flag_words_seen,
                     c->messages_sent, c->messages_received, c->messages_dropped, c->frames_malformed,
                     c->peer_errors);
}

void ompi_comm_ft_ucx_finalize(void)
{
    if (NULL == ucx.context) {
        return;
    }
    if (NULL != ucx.peers) {
        flush_sends();
        report_counters();
        for (uint32_t rank = 0; rank < ucx.size; ++rank) {
            peer_t *peer = &ucx.peers[rank];
            ompi_comm_ft_flag_unmap(peer->mapped_flag);
            close_endpoint(ucx.hb_worker, peer->hb_ep);
            close_endpoint(ucx.am_worker, peer->am_ep);
        }
    }
    free_peers();
    destroy_context();
}
