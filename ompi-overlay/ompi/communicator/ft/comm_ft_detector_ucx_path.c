/*
 * Copyright (c) 2026      The btl_ft authors.  All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * The detector's own UCX transport, its data path: heartbeat words to an
 * observer (a store into its mapped flag on this node, an eager active
 * message to its heartbeat worker on another), the core's messages as
 * active messages, and what arrives. Called by the core, under the core
 * lock; comm_ft_detector_ucx.c says why the paths are what they are.
 */

#include "ompi_config.h"

#include <stdlib.h>
#include <string.h>

#include "ompi/communicator/ft/comm_ft_detector_ucx_internal.h"
#include "ompi/constants.h"
#include "ompi/runtime/ompi_rte.h"

#define FRAME_KIND_MESSAGE 0
/* heartbeat words still in flight when the next one is due: beyond this
 * the observer is not taking them, and one more would only queue */
#define WORDS_IN_FLIGHT_MAX 4

/* Prefix of every detector message. The tag names the union whose
 * detector it is for: ranks name other processes in another. */
typedef struct frame_header_t {
    uint8_t kind;
    uint8_t pad[3];
    uint32_t from;
    uint64_t tag;
} frame_header_t;

static ucx_transport_t *const ucx = &ompi_comm_ft_ucx_state;

/* Whether heartbeat words carry the tag (unions of fewer than 2^24). */
static bool words_tagged(void)
{
    return ucx->size < EPOCH_TAGGED_SIZE_MAX;
}

/* A word stored or sent by an emitter of another union (one that has not
 * moved yet, or this process has not). */
static bool word_of_another_union(uint64_t word)
{
    return words_tagged() && (word >> EPOCH_TAG_SHIFT) != ucx->word_tag;
}

/* How heartbeats reach this observer: its flag mapped here, or a message
 * to its heartbeat worker. A node-mate whose flag file is gone has left
 * (MPI_Finalize removes it): an observer that sent NEWOBSERVER as it was
 * leaving itself. Nothing reaches it any more. */
void ompi_comm_ft_ucx_find_heartbeat_path(uint32_t observer)
{
    peer_t *peer = &ucx->peers[observer];
    const char *flag_path;
    bool gone = false;

    peer->heartbeat_path_known = true;
    if (ompi_comm_ft_ucx_same_node(observer)
        && NULL != (flag_path = ompi_comm_ft_ucx_flag_path_of(observer))
        && NULL != (peer->mapped_flag = ompi_comm_ft_flag_map(flag_path, &gone))) {
        ompi_comm_ft_log(5, "btl_ft: ucx: heartbeats to rank %u by store into its mapped flag",
                         observer);
        return;
    }
    if (gone) {
        peer->unreachable = true;
        ompi_comm_ft_log(5, "btl_ft: ucx: rank %u left: its flag is gone", observer);
        return;
    }
    if (NULL == ucx->hb_worker
        || NULL == (peer->hb_ep = ompi_comm_ft_ucx_endpoint(ucx->hb_worker, observer, PART_HB_FULL, PART_HB_NET))) {
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
    --ucx->words_in_flight;
    if (UCS_OK == status) {
        ++ucx->counters.heartbeats_sent_completed;
    }
    ucp_request_free(request);
}

/* The word lives in a slot until its send completes; a slot is reused
 * WORD_SOURCE_SLOTS heartbeats later, and at most WORDS_IN_FLIGHT_MAX wait. */
static int send_word(peer_t *peer, uint64_t word)
{
    uint64_t *source = &ucx->word_source[ucx->word_source_next++ % WORD_SOURCE_SLOTS];
    ucp_request_param_t param = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_FLAGS,
        .cb.send = word_sent,
        .flags = UCP_AM_SEND_FLAG_EAGER,
    };
    void *request;

    if (ucx->words_in_flight >= WORDS_IN_FLIGHT_MAX) {
        ++ucx->counters.heartbeats_skipped;
        return 0; /* the core counts the gap */
    }
    *source = word;
    request = ucp_am_send_nbx(peer->hb_ep, HEARTBEAT_AM_ID, NULL, 0, source, sizeof(*source), &param);
    if (UCS_PTR_IS_ERR(request)) {
        return -1;
    }
    ++ucx->counters.heartbeats_sent;
    if (NULL == request) {
        ++ucx->counters.heartbeats_sent_completed;
    } else {
        ++ucx->words_in_flight;
    }
    return 0;
}

int ompi_comm_ft_ucx_put_heartbeat(void *context, uint32_t observer, uint64_t word)
{
    peer_t *peer;

    if (observer >= ucx->size || observer == ucx->self || !ucx->rdma_heartbeat) {
        ++ucx->counters.heartbeats_as_messages;
        return -1;
    }
    peer = &ucx->peers[observer];
    if (!peer->heartbeat_path_known) {
        ompi_comm_ft_ucx_find_heartbeat_path(observer);
    }
    if (words_tagged()) {
        word |= (uint64_t) ucx->word_tag << EPOCH_TAG_SHIFT;
    }
    if (NULL != peer->mapped_flag) {
        __atomic_store_n(peer->mapped_flag, word, __ATOMIC_RELEASE);
        ++ucx->counters.heartbeats_stored;
        return 0;
    }
    if (NULL != peer->hb_ep && !peer->unreachable && 0 == send_word(peer, word)) {
        return 0;
    }
    if (peer->unreachable) { /* it left or died: no path is left (counted apart) */
        ++ucx->counters.heartbeats_to_unreachable;
    }
    ++ucx->counters.heartbeats_as_messages;
    return -1;
}

static void send_done(void *request, ucs_status_t status, void *user_data)
{
    --ucx->sends_in_flight;
    if (UCS_OK != status) {
        ++ucx->counters.messages_dropped;
    }
    free(user_data);
    ucp_request_free(request);
}

/* The frame is copied: UCX may hold it until the send completes. */
void ompi_comm_ft_ucx_send(void *context, uint32_t peer_rank, const void *bytes, size_t length)
{
    frame_header_t header = {.kind = FRAME_KIND_MESSAGE, .tag = ucx->frame_tag, .from = ucx->self};
    ucp_request_param_t param = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_FLAGS,
        .cb.send = send_done,
        .flags = UCP_AM_SEND_FLAG_EAGER,
    };
    peer_t *peer;
    unsigned char *frame;
    void *request;

    if (peer_rank >= ucx->size || peer_rank == ucx->self || length > ucx->max_message_bytes) {
        return;
    }
    peer = &ucx->peers[peer_rank];
    if (NULL == peer->am_ep && !peer->unreachable) {
        peer->am_ep = ompi_comm_ft_ucx_endpoint(ucx->am_worker, peer_rank, PART_AM_FULL, PART_AM_NET);
    }
    if (NULL == peer->am_ep || peer->unreachable
        || NULL == (frame = malloc(sizeof(header) + length))) {
        ++ucx->counters.messages_dropped;
        return;
    }
    memcpy(frame, &header, sizeof(header));
    memcpy(frame + sizeof(header), bytes, length);
    param.user_data = frame;
    request = ucp_am_send_nbx(peer->am_ep, AM_ID, frame, sizeof(header), frame + sizeof(header),
                              length, &param);
    if (UCS_PTR_IS_PTR(request)) {
        ++ucx->sends_in_flight;
    } else {
        free(frame);
    }
    if (UCS_PTR_IS_ERR(request)) {
        ++ucx->counters.messages_dropped;
        ompi_comm_ft_log(5, "btl_ft: ucx: send to rank %u failed: %s", peer_rank,
                         ucs_status_string(UCS_PTR_STATUS(request)));
        return;
    }
    ++ucx->counters.messages_sent;
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
        || length > ucx->max_message_bytes) {
        ++ucx->counters.frames_malformed;
        return UCS_OK;
    }
    memcpy(&header, header_bytes, sizeof(header));
    if (ucx->frame_tag != header.tag) {
        if (FRAME_KIND_MESSAGE == header.kind && btl_ft_is_join(data, length)) {
            ++ucx->counters.messages_received; /* names its union in full: no rank of this one */
            ucx->deliver(OMPI_COMM_FT_FROM_ANOTHER_UNION, data, length);
        } else {
            ++ucx->counters.other_epoch_dropped; /* the sender, or this process, has not moved yet */
        }
        return UCS_OK;
    }
    if (FRAME_KIND_MESSAGE != header.kind || header.from >= ucx->size) {
        ++ucx->counters.frames_malformed;
        return UCS_OK;
    }
    ++ucx->counters.messages_received;
    ucx->deliver(header.from, data, length);
    return UCS_OK;
}

/* A heartbeat word from an emitter on another node, on the heartbeat
 * worker: into the flag, as a node-mate's store would put it. Not one of
 * another union (an emitter that has not moved yet): stored, it would
 * hide this union's last word before the flag is read. */
static ucs_status_t on_heartbeat(void *arg, const void *header, size_t header_length, void *data,
                                 size_t length, const ucp_am_recv_param_t *param)
{
    uint64_t word;

    if (sizeof(word) != length || (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV)) {
        ++ucx->counters.frames_malformed;
        return UCS_OK;
    }
    memcpy(&word, data, sizeof(word));
    ++ucx->counters.heartbeats_received;
    if (word_of_another_union(word)) {
        ++ucx->counters.other_epoch_dropped;
        return UCS_OK;
    }
    __atomic_store_n(ucx->flag, word, __ATOMIC_RELEASE);
    return UCS_OK;
}

void ompi_comm_ft_ucx_progress(void)
{
    /* messages first: a LEAVE before the error its sender's exit causes */
    while (0 != ucp_worker_progress(ucx->am_worker)) {
    }
    while (NULL != ucx->hb_worker && 0 != ucp_worker_progress(ucx->hb_worker)) {
    }
}

bool ompi_comm_ft_ucx_arm(void)
{
    return UCS_ERR_BUSY != ucp_worker_arm(ucx->am_worker);
}

int ompi_comm_ft_ucx_wait_fd(void)
{
    return ucx->wait_fd;
}

/* A word stored by an emitter of another union is not this union's: the
 * last word of this one stands until one comes. */
uint64_t ompi_comm_ft_ucx_read_flag(void)
{
    uint64_t word = __atomic_load_n(ucx->flag, __ATOMIC_ACQUIRE);

    if (word != ucx->last_flag_word) {
        ucx->last_flag_word = word;
        ++ucx->counters.flag_words_seen;
        if (word_of_another_union(word)) {
            ++ucx->counters.other_epoch_dropped;
        } else {
            ucx->last_epoch_word = word & ((UINT64_C(1) << EPOCH_TAG_SHIFT) - 1);
        }
    }
    return words_tagged() ? ucx->last_epoch_word : word;
}

static ucs_status_t on_hello(void *arg, const void *header, size_t header_length, void *data,
                             size_t length, const ucp_am_recv_param_t *param)
{
    return UCS_OK;
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

/* Message, heartbeat and hello handlers, on the workers that take them. */
int ompi_comm_ft_ucx_set_handlers(void)
{
    if (OMPI_SUCCESS != set_handler(ucx->am_worker, AM_ID, on_message)
        || OMPI_SUCCESS != set_handler(ucx->am_worker, HELLO_AM_ID, on_hello)) {
        return OMPI_ERROR;
    }
    if (NULL != ucx->hb_worker
        && (OMPI_SUCCESS != set_handler(ucx->hb_worker, HEARTBEAT_AM_ID, on_heartbeat)
            || OMPI_SUCCESS != set_handler(ucx->hb_worker, HELLO_AM_ID, on_hello))) {
        return OMPI_ERROR;
    }
    return OMPI_SUCCESS;
}
