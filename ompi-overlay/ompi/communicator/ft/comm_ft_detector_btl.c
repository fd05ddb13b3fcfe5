/*
 * Copyright (c) 2026      The btl_ft authors.  All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * The BTL side of the btl_ft detector: the heartbeat flag, one-sided heartbeat
 * puts, and the active-message tag that carries the core's messages.
 *
 * The observer owns one 64-bit flag word, registered once with every BTL module
 * that needs registration, and read with a plain load by the driver. Its handle
 * (address, the identity of the registering BTL module, the registration bytes)
 * travels inside the core's NEWOBSERVER message; the emitter resolves its put
 * path to the observer from that handle and deposits each heartbeat word with
 * btl_put, so heartbeats need no progress at the observer (sm single copy, uct,
 * ofi; tcp's put is emulated and does need it). Where there is no put, no
 * usable handle yet, or the put fails, the word goes as an active message.
 *
 * Upstream's detector re-registered its flag for every new emitter and shipped
 * the registration in its own request message; registering once per module and
 * letting the core carry the handle keeps all protocol decisions in the core.
 * The put asks for local completion only (the next word overwrites it anyway):
 * a put that waits for its target to answer can hold up a sender whose
 * observer has stopped (libfabric's shm, patch 0004).
 * Put errors are not reported as failures: a peer that finished MPI_Finalize
 * and exited looks the same, and a crashed observer is found by its own
 * observer. Transport errors reach the core through ULFM instead (ob1's BTL
 * error callback -> ompi_errhandler_proc_failed -> the detector hook).
 */

#include "ompi_config.h"

#include <inttypes.h>
#include <string.h>

#include "opal/class/opal_list.h"
#include "opal/mca/btl/base/base.h"
#include "opal/mca/btl/btl.h"
#include "opal/sys/atomic.h"
#include "opal/util/output.h"

#include "ompi/communicator/communicator.h"
#include "ompi/communicator/ft/comm_ft_detector.h"
#include "ompi/mca/bml/base/base.h"
#include "ompi/mca/bml/bml.h"
#include "ompi/proc/proc.h"
#include "ompi/runtime/params.h"

#define HANDLE_HEADER_BYTES (sizeof(uint64_t) + sizeof(uint32_t))
#define PUT_SOURCE_SLOTS 16
#define REGISTRATIONS_MAX 8

/* The one kind of frame: a message of the core. */
#define FRAME_KIND_MESSAGE 0

/* Prefix of every message on MCA_BTL_TAG_FT_DETECTOR. */
typedef struct ompi_comm_ft_frame_header_t {
    uint8_t kind; /* FRAME_KIND_MESSAGE */
    uint8_t pad[3];
    uint32_t from;
} ompi_comm_ft_frame_header_t;

#define FRAME_MAX_BYTES (sizeof(ompi_comm_ft_frame_header_t) + BTL_FT_MESSAGE_MAX_BYTES)

typedef struct ompi_comm_ft_registration_t {
    mca_btl_base_module_t *btl;
    mca_btl_base_registration_handle_t *flag_handle;
    mca_btl_base_registration_handle_t *source_handle;
} ompi_comm_ft_registration_t;

/* Where heartbeats to the current observer go. */
typedef struct ompi_comm_ft_put_target_t {
    uint32_t observer;
    uint64_t flag_address;  /* 0: no handle received */
    uint32_t btl_hash;
    size_t handle_length;
    uint64_t handle[(BTL_FT_HANDLE_MAX_BYTES + 7) / 8]; /* aligned copy of the remote handle */
    bool resolved;
    mca_bml_base_btl_t *bml_btl; /* NULL: active messages */
    mca_btl_base_registration_handle_t *local_handle;
} ompi_comm_ft_put_target_t;

/* Written by the emitter's put (or a BTL on its behalf), read by the driver. */
static volatile uint64_t flag_word __opal_attribute_aligned__(64) = 0;
/* Puts read their word from here; a slot is reused only PUT_SOURCE_SLOTS
 * heartbeats later, long after its local completion. */
static uint64_t put_source[PUT_SOURCE_SLOTS] __opal_attribute_aligned__(64);

typedef struct ompi_comm_ft_transport_t {
    ompi_comm_ft_deliver_fn_t deliver; /* NULL until init: frames are dropped */
    uint32_t world_size;
    uint32_t self;
    bool use_rdma;
    unsigned put_source_next;
    ompi_comm_ft_registration_t registrations[REGISTRATIONS_MAX];
    int registration_count;
    ompi_comm_ft_put_target_t target;

    /* What carried the heartbeats, reported at finalize: the evidence that
     * the put path is the one in use. Completions run on any thread. */
    uint64_t heartbeats_put;
    opal_atomic_int64_t heartbeats_put_completed;
    uint64_t heartbeats_sent_as_messages;
    uint64_t heartbeats_before_handle; /* of those, before the observer's handle came */
    /* detector messages the BTL would not take (no endpoint or descriptor,
     * or its send failed): the core tolerates loss, the count shows it */
    opal_atomic_int64_t messages_dropped;
    uint64_t flag_words_seen;
    uint64_t last_flag_word;
    const char *put_btl_name;
} ompi_comm_ft_transport_t;

static ompi_comm_ft_transport_t transport = {.target = {.observer = UINT32_MAX}};

/* Names a BTL module alike in every process: its component and its place
 * among that component's modules (uct opens one module per memory domain,
 * each with its own registration keys). */
static uint32_t module_identity(const mca_btl_base_module_t *btl)
{
    const char *name = btl->btl_component->btl_version.mca_component_name;
    uint32_t hash = 2166136261u; /* FNV-1a */
    uint32_t ordinal = 0;
    mca_btl_base_selected_module_t *selected;

    for (; '\0' != *name; ++name) {
        hash = (hash ^ (uint8_t) *name) * 16777619u;
    }
    OPAL_LIST_FOREACH (selected, &mca_btl_base_modules_initialized,
                       mca_btl_base_selected_module_t) {
        if (selected->btl_module == btl) {
            break;
        }
        if (selected->btl_component == btl->btl_component) {
            ++ordinal;
        }
    }
    return (hash ^ ordinal) * 16777619u;
}

static bool btl_can_put_word(const mca_btl_base_module_t *btl)
{
    return NULL != btl->btl_put && (btl->btl_flags & MCA_BTL_FLAGS_PUT)
           && btl->btl_put_limit >= sizeof(uint64_t)
           && btl->btl_put_alignment <= sizeof(uint64_t);
}

static ompi_comm_ft_registration_t *find_registration(const mca_btl_base_module_t *btl)
{
    for (int i = 0; i < transport.registration_count; ++i) {
        if (transport.registrations[i].btl == btl) {
            return &transport.registrations[i];
        }
    }
    return NULL;
}

static void register_flag(mca_btl_base_module_t *btl)
{
    ompi_comm_ft_registration_t *reg;

    if (!btl_can_put_word(btl) || NULL == btl->btl_register_mem
        || REGISTRATIONS_MAX == transport.registration_count) {
        return;
    }
    reg = &transport.registrations[transport.registration_count];
    reg->btl = btl;
    reg->flag_handle = btl->btl_register_mem(btl, NULL, (void *) &flag_word, sizeof(flag_word),
                                             MCA_BTL_REG_FLAG_LOCAL_WRITE
                                                 | MCA_BTL_REG_FLAG_REMOTE_WRITE);
    reg->source_handle = btl->btl_register_mem(btl, NULL, put_source, sizeof(put_source), 0);
    if (NULL == reg->flag_handle && NULL == reg->source_handle) {
        return;
    }
    ++transport.registration_count;
}

/* {uint64 flag address, uint32 module identity, registration bytes}; the identity
 * is 0 and the bytes absent when no module needed registration. */
static size_t pack_handle(unsigned char *handle, size_t capacity)
{
    uint64_t address = (uint64_t) (uintptr_t) &flag_word;
    uint32_t hash = 0;
    size_t length = HANDLE_HEADER_BYTES;
    ompi_comm_ft_registration_t *packed = NULL;

    for (int i = 0; i < transport.registration_count && NULL == packed; ++i) {
        size_t size = transport.registrations[i].btl->btl_registration_handle_size;
        if (NULL != transport.registrations[i].flag_handle && HANDLE_HEADER_BYTES + size <= capacity) {
            packed = &transport.registrations[i];
        }
    }
    if (NULL != packed) {
        hash = module_identity(packed->btl);
        memcpy(handle + HANDLE_HEADER_BYTES, packed->flag_handle,
               packed->btl->btl_registration_handle_size);
        length += packed->btl->btl_registration_handle_size;
    }
    memcpy(handle, &address, sizeof(address));
    memcpy(handle + sizeof(address), &hash, sizeof(hash));
    return length;
}

/* A module that can put into the observer's flag: one without registration,
 * or the very module whose keys the observer sent. */
static mca_bml_base_btl_t *find_put_btl(mca_bml_base_btl_array_t *array)
{
    size_t count = mca_bml_base_btl_array_get_size(array);

    for (size_t i = 0; i < count; ++i) {
        mca_bml_base_btl_t *bml_btl = mca_bml_base_btl_array_get_index(array, i);
        mca_btl_base_module_t *btl = bml_btl->btl;
        if (btl_can_put_word(btl)
            && (NULL == btl->btl_register_mem
                || (transport.target.btl_hash == module_identity(btl)
                    && transport.target.handle_length == btl->btl_registration_handle_size))) {
            return bml_btl;
        }
    }
    return NULL;
}

/* No ompi_proc_is_active() filter: the core may have to tell a process that
 * ULFM already counts as failed that it was declared dead. */
static mca_bml_base_endpoint_t *endpoint_of(uint32_t rank)
{
    ompi_proc_t *proc = ompi_comm_peer_lookup(&ompi_mpi_comm_world.comm, (int) rank);

    return NULL == proc ? NULL : mca_bml_base_get_endpoint(proc);
}

/* Open MPI makes a peer's endpoint at first contact, and the BTLs read the
 * peer's address through PMIx to make it, btl/tcp with its component lock
 * held. Made by the detector thread inside the core lock (a notice to
 * forward, a PROBE), after a crash that read waited hundreds of
 * milliseconds: the detector stopped, the application's tcp progress
 * waited for the lock, and the process was declared failed (5 emulated
 * nodes of 2 ranks, one node's ranks killed: 8 of 18 runs). So every
 * endpoint is made at MPI_Init, on the application's thread, before
 * anyone failed. Each costs a PMIx read and about a kilobyte, so above
 * ENDPOINTS_AT_INIT_MAX peers they stay lazy, and so does this hazard. */
#define ENDPOINTS_AT_INIT_MAX 4096

void ompi_comm_ft_btl_make_endpoints(void)
{
    if (transport.world_size > ENDPOINTS_AT_INIT_MAX) {
        return;
    }
    for (uint32_t rank = 0; rank < transport.world_size; ++rank) {
        if (rank != transport.self) {
            (void) endpoint_of(rank);
        }
    }
}

/* Picks the put path to the observer, or none (active messages). */
static void resolve_put_target(void)
{
    mca_bml_base_endpoint_t *endpoint;
    mca_bml_base_btl_t *bml_btl = NULL;
    ompi_comm_ft_registration_t *reg;

    transport.target.resolved = true;
    transport.target.bml_btl = NULL;
    transport.target.local_handle = NULL;
    if (!transport.use_rdma || 0 == transport.target.flag_address
        || NULL == (endpoint = endpoint_of(transport.target.observer))) {
        return;
    }
    /* tcp emulates put but is not in btl_rdma (it has no get) */
    if (NULL == (bml_btl = find_put_btl(&endpoint->btl_rdma))
        && NULL == (bml_btl = find_put_btl(&endpoint->btl_eager))) {
        return;
    }
    if (NULL != bml_btl->btl->btl_register_mem) {
        reg = find_registration(bml_btl->btl);
        if (sizeof(uint64_t) > bml_btl->btl->btl_put_local_registration_threshold) {
            if (NULL == reg || NULL == reg->source_handle) {
                return;
            }
            transport.target.local_handle = reg->source_handle;
        }
    }
    transport.target.bml_btl = bml_btl;
    transport.put_btl_name = bml_btl->btl->btl_component->btl_version.mca_component_name;
    opal_output_verbose(5, ompi_ftmpi_output_handle, "%s btl_ft: heartbeats to rank %u by %s put",
                        OMPI_NAME_PRINT(OMPI_PROC_MY_NAME), transport.target.observer,
                        bml_btl->btl->btl_component->btl_version.mca_component_name);
}

static void send_complete(struct mca_btl_base_module_t *module,
                          struct mca_btl_base_endpoint_t *endpoint,
                          struct mca_btl_base_descriptor_t *descriptor, int status)
{
    if (OPAL_UNLIKELY(OPAL_SUCCESS != status)) {
        opal_output_verbose(5, ompi_ftmpi_output_handle, "%s btl_ft: send completed with %d",
                            OMPI_NAME_PRINT(OMPI_PROC_MY_NAME), status);
    }
}

static void put_complete(mca_btl_base_module_t *module, struct mca_btl_base_endpoint_t *endpoint,
                         void *local_address, mca_btl_base_registration_handle_t *local_handle,
                         void *context, void *cbdata, int status)
{
    if (OPAL_UNLIKELY(OPAL_SUCCESS != status)) {
        opal_output_verbose(5, ompi_ftmpi_output_handle,
                            "%s btl_ft: heartbeat put completed with %d",
                            OMPI_NAME_PRINT(OMPI_PROC_MY_NAME), status);
        return;
    }
    opal_atomic_add_fetch_64(&transport.heartbeats_put_completed, 1);
}

static void send_frame(uint32_t peer, int kind, const void *bytes, size_t length)
{
    ompi_comm_ft_frame_header_t header = {.kind = (uint8_t) kind, .from = transport.self};
    mca_bml_base_endpoint_t *endpoint = endpoint_of(peer);
    mca_bml_base_btl_t *bml_btl;
    mca_btl_base_descriptor_t *des = NULL;
    unsigned char *payload;
    int ret;

    if (NULL == endpoint
        || NULL == (bml_btl = mca_bml_base_btl_array_get_index(&endpoint->btl_eager, 0))) {
        opal_atomic_add_fetch_64(&transport.messages_dropped, 1);
        return;
    }
    mca_bml_base_alloc(bml_btl, &des, MCA_BTL_NO_ORDER, sizeof(header) + length,
                       MCA_BTL_DES_FLAGS_PRIORITY | MCA_BTL_DES_FLAGS_BTL_OWNERSHIP);
    if (OPAL_UNLIKELY(NULL == des)) {
        opal_atomic_add_fetch_64(&transport.messages_dropped, 1);
        opal_output_verbose(5, ompi_ftmpi_output_handle,
                            "%s btl_ft: no descriptor for %zu bytes to rank %u, message dropped",
                            OMPI_NAME_PRINT(OMPI_PROC_MY_NAME), length, peer);
        return;
    }
    payload = des->des_segments[0].seg_addr.pval;
    memcpy(payload, &header, sizeof(header));
    memcpy(payload + sizeof(header), bytes, length);
    des->des_cbfunc = send_complete;
    ret = mca_bml_base_send(bml_btl, des, MCA_BTL_TAG_FT_DETECTOR);
    if (OPAL_UNLIKELY(ret < 0)) {
        mca_bml_base_free(bml_btl, des);
        opal_atomic_add_fetch_64(&transport.messages_dropped, 1);
        opal_output_verbose(5, ompi_ftmpi_output_handle,
                            "%s btl_ft: send to rank %u failed (%d), message dropped",
                            OMPI_NAME_PRINT(OMPI_PROC_MY_NAME), peer, ret);
    }
}

/* Runs inside BTL progress, on any thread: validate, then only queue. */
static void recv_cb(mca_btl_base_module_t *btl, const mca_btl_base_receive_descriptor_t *desc)
{
    unsigned char gathered[FRAME_MAX_BYTES];
    const unsigned char *frame = gathered;
    ompi_comm_ft_frame_header_t header;
    ompi_comm_ft_deliver_fn_t deliver = transport.deliver;
    size_t length = 0;

    if (1 == desc->des_segment_count) {
        frame = desc->des_segments[0].seg_addr.pval;
        length = desc->des_segments[0].seg_len;
    } else {
        for (size_t i = 0; i < desc->des_segment_count; ++i) {
            size_t seg_len = desc->des_segments[i].seg_len;
            if (length + seg_len > sizeof(gathered)) {
                return;
            }
            memcpy(gathered + length, desc->des_segments[i].seg_addr.pval, seg_len);
            length += seg_len;
        }
    }
    if (length < sizeof(header) || length > FRAME_MAX_BYTES) {
        return;
    }
    memcpy(&header, frame, sizeof(header));
    if (header.from >= transport.world_size || FRAME_KIND_MESSAGE != header.kind
        || NULL == deliver) {
        return;
    }
    deliver(header.from, frame + sizeof(header), length - sizeof(header));
}

int ompi_comm_ft_btl_register_tag(void)
{
    static bool registered = false;
    int ret;

    transport.world_size = (uint32_t) ompi_comm_size(&ompi_mpi_comm_world.comm);
    if (registered) {
        return OMPI_SUCCESS;
    }
    ret = mca_bml.bml_register(MCA_BTL_TAG_FT_DETECTOR, recv_cb, NULL);
    registered = (OMPI_SUCCESS == ret);
    return ret;
}

int ompi_comm_ft_btl_init(uint32_t self, uint32_t size, bool rdma_heartbeat,
                                ompi_comm_ft_deliver_fn_t deliver, void *handle,
                                size_t handle_capacity, size_t *handle_length,
                                size_t *max_message_bytes)
{
    mca_btl_base_selected_module_t *selected;
    size_t max_bytes = BTL_FT_MESSAGE_MAX_BYTES;

    transport.self = self;
    transport.world_size = size;
    transport.deliver = deliver;
    transport.use_rdma = rdma_heartbeat;
    flag_word = 0;
    transport.target = (ompi_comm_ft_put_target_t){.observer = UINT32_MAX};

    OPAL_LIST_FOREACH (selected, &mca_btl_base_modules_initialized,
                       mca_btl_base_selected_module_t) {
        mca_btl_base_module_t *btl = selected->btl_module;
        if (btl->btl_eager_limit > sizeof(ompi_comm_ft_frame_header_t)
            && btl->btl_eager_limit - sizeof(ompi_comm_ft_frame_header_t) < max_bytes) {
            max_bytes = btl->btl_eager_limit - sizeof(ompi_comm_ft_frame_header_t);
        }
        if (transport.use_rdma) {
            register_flag(btl);
        }
    }
    *max_message_bytes = max_bytes;
    *handle_length = transport.use_rdma ? pack_handle(handle, handle_capacity) : 0;
    return OMPI_SUCCESS;
}

void ompi_comm_ft_btl_finalize(void)
{
    opal_output_verbose(5, ompi_ftmpi_output_handle,
                        "%s btl_ft: heartbeats: %" PRIu64 " by %s put (%" PRId64 " completed), %" PRIu64
                        " by active message (%" PRIu64 " before the observer's flag handle came); %" PRIu64
                        " new words read from the local flag; %" PRId64
                        " detector messages dropped (the BTL would not take them)",
                        OMPI_NAME_PRINT(OMPI_PROC_MY_NAME), transport.heartbeats_put,
                        NULL == transport.put_btl_name ? "no" : transport.put_btl_name,
                        (int64_t) transport.heartbeats_put_completed, transport.heartbeats_sent_as_messages,
                        transport.heartbeats_before_handle, transport.flag_words_seen,
                        (int64_t) transport.messages_dropped);
    for (int i = 0; i < transport.registration_count; ++i) {
        mca_btl_base_module_t *btl = transport.registrations[i].btl;
        if (NULL != transport.registrations[i].flag_handle) {
            btl->btl_deregister_mem(btl, transport.registrations[i].flag_handle);
        }
        if (NULL != transport.registrations[i].source_handle) {
            btl->btl_deregister_mem(btl, transport.registrations[i].source_handle);
        }
    }
    transport.registration_count = 0;
    transport.target = (ompi_comm_ft_put_target_t){.observer = UINT32_MAX};
    transport.deliver = NULL;
}

uint64_t ompi_comm_ft_btl_read_flag(void)
{
    uint64_t word;
    opal_atomic_rmb();
    word = flag_word;
    if (word != transport.last_flag_word) {
        transport.last_flag_word = word;
        ++transport.flag_words_seen;
    }
    return word;
}

void ompi_comm_ft_btl_observer_handle(void *context, uint32_t observer, const void *handle,
                                            size_t length)
{
    transport.target = (ompi_comm_ft_put_target_t){.observer = observer};
    if (NULL == handle || length < HANDLE_HEADER_BYTES || length > BTL_FT_HANDLE_MAX_BYTES) {
        return;
    }
    memcpy(&transport.target.flag_address, handle, sizeof(uint64_t));
    memcpy(&transport.target.btl_hash, (const unsigned char *) handle + sizeof(uint64_t), sizeof(uint32_t));
    transport.target.handle_length = length - HANDLE_HEADER_BYTES;
    memcpy(transport.target.handle, (const unsigned char *) handle + HANDLE_HEADER_BYTES,
           transport.target.handle_length);
}

/* 0: put (or lost to a busy BTL, which costs one period); -1: no put path
 * to this observer, and the core sends the word as a HEARTBEAT message. */
int ompi_comm_ft_btl_put_heartbeat(void *context, uint32_t observer, uint64_t word)
{
    uint64_t *source;
    int ret;

    if (observer != transport.target.observer) {
        /* a new observer whose handle has not arrived yet */
        transport.target = (ompi_comm_ft_put_target_t){.observer = observer};
    }
    if (!transport.target.resolved) {
        resolve_put_target();
    }
    if (NULL != transport.target.bml_btl) {
        source = &put_source[transport.put_source_next++ % PUT_SOURCE_SLOTS];
        *source = word;
        ret = mca_bml_base_put(transport.target.bml_btl, source, transport.target.flag_address, transport.target.local_handle,
                               transport.target.handle_length
                                   ? (mca_btl_base_registration_handle_t *) transport.target.handle
                                   : NULL,
                               sizeof(uint64_t), MCA_BTL_PUT_FLAG_LOCAL_COMPLETION,
                               MCA_BTL_NO_ORDER, put_complete, NULL);
        if (OPAL_LIKELY(OPAL_SUCCESS == ret)) {
            ++transport.heartbeats_put;
            return 0;
        }
        if (OPAL_ERR_OUT_OF_RESOURCE == ret) {
            return 0; /* a busy BTL costs one period, the core counts the gap */
        }
        opal_output_verbose(5, ompi_ftmpi_output_handle,
                            "%s btl_ft: heartbeat put to rank %u failed (%d), sending it",
                            OMPI_NAME_PRINT(OMPI_PROC_MY_NAME), observer, ret);
    }
    ++transport.heartbeats_sent_as_messages;
    if (0 == transport.target.flag_address) {
        ++transport.heartbeats_before_handle;
    }
    return -1;
}

void ompi_comm_ft_btl_send(void *context, uint32_t peer, const void *bytes, size_t length)
{
    if (length > BTL_FT_MESSAGE_MAX_BYTES) {
        return;
    }
    send_frame(peer, FRAME_KIND_MESSAGE, bytes, length);
}
