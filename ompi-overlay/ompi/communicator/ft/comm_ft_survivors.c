/*
 * The survivor allreduce's shim: one core state machine per communicator
 * (btl_ft_survivors_t), kept as a communicator attribute so that it goes
 * with MPI_Comm_free. Its messages travel over the PML on the communicator
 * itself under a tag of ULFM's fault-tolerance range, the way ULFM's own
 * agreement and shrink do, so they pass MPI_ANY_SOURCE and revoked-
 * communicator checks. Failures come from ULFM's list of failed processes,
 * which the detector feeds.
 *
 * The application's thread drives it: inside the call, and after it from a
 * low-priority progress callback, because a process that returned still
 * forwards the result to processes orphaned by a later failure.
 *
 * Rejected alternative: the detector's own transport. Its thread would
 * handle every message, one wakeup per hop on the collective's critical
 * path, where the PML delivers in the caller's own progress loop.
 *
 * $HEADER$
 */
#include "ompi_config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "btl_ft/btl_ft_survivors.h"

#include "opal/runtime/opal_progress.h"
#include "opal/util/output.h"

#include "ompi/attribute/attribute.h"
#include "ompi/communicator/ft/comm_ft_survivors.h"
#include "ompi/communicator/ft/comm_ft_survivors_params.h"
#include "ompi/mca/coll/base/coll_tags.h"
#include "ompi/runtime/ompi_rte.h"
#include "ompi/mca/pml/pml.h"
#include "ompi/message/message.h"
#include "ompi/request/request.h"
#include "ompi/runtime/params.h"

#if OPAL_ENABLE_FT_MPI

/* A send's copy of its message, kept for the next send once it is done:
 * most calls send a few messages of the same length. */
typedef struct survivors_send {
    ompi_request_t *request;
    void *bytes;
    size_t capacity;
} survivors_send_t;

typedef struct survivors_comm {
    struct survivors_comm *next;
    ompi_communicator_t *comm;
    btl_ft_survivors_t *machine;
    /* the current call's reduction, for the combine callback */
    ompi_op_t *op;
    ompi_datatype_t *datatype;
    int count;
    int failed_seen;  /* size of ULFM's failed group when last read */
    /* the fast path's bound this process allows, until its first call
     * agrees on one with the others */
    uint64_t fast_path_wish;
    bool fast_path_agreed;
    bool busy;        /* being driven: the progress callback keeps off */
    /* sends[0, send_count) are under way; the rest of send_slots are
     * buffers free for the next sends */
    survivors_send_t *sends;
    size_t send_count, send_slots;
    /* a received message's bytes: of the posted receive while there is one */
    void *inbox;
    size_t inbox_capacity;
    /* the receive posted for the one peer a call waits for, or NULL */
    ompi_request_t *posted;
    uint32_t posted_peer;
} survivors_comm_t;

static int survivors_keyval = MPI_KEYVAL_INVALID;

static survivors_comm_t *survivors_all = NULL;

static int survivors_progress(void);

/* The slot of the next send, with room for `length` bytes; NULL when
 * memory runs out. */
static survivors_send_t *survivors_free_slot(survivors_comm_t *s, size_t length)
{
    survivors_send_t *slot;
    if (s->send_count == s->send_slots) {
        size_t slots = s->send_slots ? 2 * s->send_slots : 8;
        survivors_send_t *grown = realloc(s->sends, slots * sizeof(*grown));
        if (NULL == grown) {
            return NULL;
        }
        memset(grown + s->send_slots, 0, (slots - s->send_slots) * sizeof(*grown));
        s->sends = grown;
        s->send_slots = slots;
    }
    slot = &s->sends[s->send_count];
    if (slot->capacity < length) {
        void *bytes = realloc(slot->bytes, length);
        if (NULL == bytes) {
            return NULL;
        }
        slot->bytes = bytes;
        slot->capacity = length;
    }
    return slot;
}

static void survivors_send_cb(void *context, uint32_t peer, const void *bytes, size_t length)
{
    survivors_comm_t *s = (survivors_comm_t *) context;
    survivors_send_t *slot = survivors_free_slot(s, length);
    if (NULL == slot) {
        return; /* a lost message: the transport contract allows it */
    }
    memcpy(slot->bytes, bytes, length);
    if (OMPI_SUCCESS != MCA_PML_CALL(isend(slot->bytes, length, MPI_BYTE, (int) peer, MCA_COLL_BASE_TAG_SURVIVORS,
                                           MCA_PML_BASE_SEND_STANDARD, s->comm, &slot->request))) {
        return;
    }
    s->send_count++;
}

static void survivors_combine_cb(void *context, void *into, const void *value, size_t length)
{
    survivors_comm_t *s = (survivors_comm_t *) context;
    (void) length;
    ompi_op_reduce(s->op, (void *) value, into, s->count, s->datatype);
}

/* Frees the sends that completed. It looks without progressing them
 * (ompi_request_test would run opal_progress once per send still under
 * way): the call's loop progresses once per turn, in its probe. A send to
 * a process that failed may never complete; it is kept, and released with
 * the communicator. */
static void survivors_reap(survivors_comm_t *s)
{
    size_t kept = 0;
    for (size_t i = 0; i < s->send_count; ++i) {
        survivors_send_t slot = s->sends[i];
        if (REQUEST_COMPLETE(slot.request)) {
            ompi_request_free(&slot.request);
        } else { /* under way: before the done ones, whose buffers go free */
            s->sends[i] = s->sends[kept];
            s->sends[kept++] = slot;
        }
    }
    s->send_count = kept;
}

/* Tells the machine every rank of the communicator ULFM knows failed, when
 * that list has grown since the last look. */
static void survivors_feed_failures(survivors_comm_t *s)
{
    int size = ompi_comm_size(s->comm);
    int failed_now = ompi_group_size(ompi_group_all_failed_procs);
    uint32_t *ranks;
    size_t count = 0;
    if (failed_now == s->failed_seen) {
        return;
    }
    s->failed_seen = failed_now;
    ranks = malloc(sizeof(*ranks) * (size_t) size);
    if (NULL == ranks) {
        s->failed_seen = -1; /* look again next time */
        return;
    }
    for (int r = 0; r < size; ++r) {
        if (!ompi_comm_is_proc_active(s->comm, r, false)) {
            ranks[count++] = (uint32_t) r;
        }
    }
    btl_ft_survivors_failed(s->machine, ranks, count);
    free(ranks);
}

/* Room for `length` bytes in the inbox; false when memory runs out. */
static bool survivors_inbox_fits(survivors_comm_t *s, size_t length)
{
    void *grown;
    if (length <= s->inbox_capacity) {
        return true;
    }
    grown = realloc(s->inbox, length);
    if (NULL == grown) {
        return false;
    }
    s->inbox = grown;
    s->inbox_capacity = length;
    return true;
}

/* Hands every message waiting under the tag to the machine. The last,
 * unmatched, probe runs opal_progress once: the progress of a turn. In a
 * call, it stops at the message that ends the call, without that probe:
 * on an oversubscribed node a progress that finds nothing yields the CPU,
 * and the call would pay a yield it does not need, as MPI_Allreduce does
 * not (it progresses only while it waits). Messages left wait for the
 * next call. */
static void survivors_drain(survivors_comm_t *s, bool in_call)
{
    for (;;) {
        int matched = 0;
        ompi_message_t *message = NULL;
        ompi_status_public_t status;
        size_t length;
        /* a match is received even if the probe reported an error, so
         * that no message is left held by a probe nobody completes */
        MCA_PML_CALL(improbe(MPI_ANY_SOURCE, MCA_COLL_BASE_TAG_SURVIVORS, s->comm, &matched, &message, &status));
        if (!matched) {
            return;
        }
        length = status._ucount;
        if (!survivors_inbox_fits(s, length)) {
            length = 0; /* receive it into nothing: dropped as malformed */
        }
        if (OMPI_SUCCESS != MCA_PML_CALL(mrecv(s->inbox, length, MPI_BYTE, &message, &status))) {
            continue;
        }
        btl_ft_survivors_message(s->machine, (uint32_t) status.MPI_SOURCE, s->inbox, status._ucount);
        if (in_call && BTL_FT_SURVIVORS_RUNNING != btl_ft_survivors_status(s->machine)) {
            return;
        }
    }
}

/* Hands the posted receive's message to the machine, unless it was
 * cancelled. One cut short (longer than the machine's bound: never from a
 * peer that keeps the protocol) goes in as it came, and is dropped as
 * malformed. */
static void survivors_take_posted(survivors_comm_t *s)
{
    ompi_status_public_t status = s->posted->req_status;
    ompi_request_free(&s->posted);
    s->posted = NULL;
    if (status._cancelled || (MPI_SUCCESS != status.MPI_ERROR && MPI_ERR_TRUNCATE != status.MPI_ERROR)) {
        return;
    }
    btl_ft_survivors_message(s->machine, s->posted_peer, s->inbox,
                             status._ucount < s->inbox_capacity ? status._ucount : s->inbox_capacity);
}

/* Ends the posted receive: cancelled, or its message taken if it matched
 * first. One matched whose sender failed before the rest of its message
 * came (a value over the BTL's eager limit) may never complete: its
 * request is released and the inbox left to it, not freed under the PML. */
static void survivors_cancel_posted(survivors_comm_t *s)
{
    if (NULL == s->posted) {
        return;
    }
    ompi_request_cancel(s->posted);
    ompi_request_wait_completion(s->posted);
    if (!REQUEST_COMPLETE(s->posted)) {
        ompi_request_free(&s->posted);
        s->posted = NULL;
        s->inbox = NULL;
        s->inbox_capacity = 0;
        return;
    }
    survivors_take_posted(s);
}

/* While no failure is known and a call waits for one peer alone (a step of
 * the fast path, or the result on the tree), a receive posted for that
 * peer, as MPI_Allreduce posts its own: the PML matches the message as it
 * arrives, where a probe finds it only once it is queued as unexpected (a
 * copy and a search more, and a probe and a receive request per message).
 * Messages from the others wait in the PML until the call waits for any
 * peer. False when it does now. */
static bool survivors_receive_awaited(survivors_comm_t *s)
{
    size_t max_bytes = 0;
    uint32_t peer;
    if (0 != s->failed_seen) {
        survivors_cancel_posted(s); /* a failure moves the call on */
        return false;
    }
    /* while the receive is posted only its message, or a failure, moves
     * the call on */
    if (NULL == s->posted) {
        peer = btl_ft_survivors_awaited(s->machine, &max_bytes);
        if (BTL_FT_SURVIVORS_ANY_PEER == peer) {
            return false;
        }
        if (!survivors_inbox_fits(s, max_bytes) ||
            OMPI_SUCCESS != MCA_PML_CALL(irecv(s->inbox, max_bytes, MPI_BYTE, (int) peer, MCA_COLL_BASE_TAG_SURVIVORS,
                                               s->comm, &s->posted))) {
            s->posted = NULL;
            return false;
        }
        s->posted_peer = peer;
    }
    if (!REQUEST_COMPLETE(s->posted)) {
        opal_progress(); /* the progress of a turn */
        if (!REQUEST_COMPLETE(s->posted)) {
            return true;
        }
    }
    survivors_take_posted(s);
    return true;
}

static void survivors_step(survivors_comm_t *s, bool in_call)
{
    survivors_feed_failures(s);
    if (!in_call || !survivors_receive_awaited(s)) {
        survivors_cancel_posted(s);
        survivors_drain(s, in_call);
    }
    survivors_reap(s);
}

static int survivors_delete_attr(MPI_Comm comm, int keyval, void *attribute, void *extra)
{
    survivors_comm_t *s = (survivors_comm_t *) attribute, **link;
    (void) comm; (void) keyval; (void) extra;
    for (link = &survivors_all; *link != NULL; link = &(*link)->next) {
        if (*link == s) {
            *link = s->next;
            break;
        }
    }
    if (NULL == survivors_all) {
        opal_progress_unregister(survivors_progress);
    }
    survivors_cancel_posted(s);
    survivors_reap(s);
    /* A send still pending goes to a process that failed: its request is
     * released, its bytes left to it rather than freed under the PML. */
    for (size_t i = 0; i < s->send_count; ++i) {
        ompi_request_free(&s->sends[i].request);
    }
    for (size_t i = s->send_count; i < s->send_slots; ++i) {
        free(s->sends[i].bytes);
    }
    btl_ft_survivors_destroy(s->machine);
    free(s->sends);
    free(s->inbox);
    free(s);
    return MPI_SUCCESS;
}

/* The communicator's machine, made at its first call. Found in the list
 * of machines, a few at most, rather than among the communicator's
 * attributes (a hash table): every machine there has its attribute,
 * whose deletion takes it out. */
static int survivors_of(ompi_communicator_t *comm, survivors_comm_t **out)
{
    ompi_attribute_fn_ptr_union_t copy_fn, delete_fn;
    btl_ft_survivors_callbacks_t callbacks;
    survivors_comm_t *s = NULL;
    uint32_t radix;
    int rc;
    for (s = survivors_all; s != NULL; s = s->next) {
        if (s->comm == comm) {
            *out = s;
            return MPI_SUCCESS;
        }
    }
    if (MPI_KEYVAL_INVALID == survivors_keyval) {
        copy_fn.attr_communicator_copy_fn = MPI_COMM_NULL_COPY_FN;
        delete_fn.attr_communicator_delete_fn = survivors_delete_attr;
        rc = ompi_attr_create_keyval(COMM_ATTR, copy_fn, delete_fn, &survivors_keyval, NULL, 0, NULL);
        if (OMPI_SUCCESS != rc) {
            return MPI_ERR_INTERN;
        }
    }
    s = calloc(1, sizeof(*s));
    if (NULL == s) {
        return MPI_ERR_NO_MEM;
    }
    s->comm = comm;
    s->failed_seen = -1;
    callbacks.context = s;
    callbacks.send = survivors_send_cb;
    callbacks.combine = survivors_combine_cb;
    radix = ompi_comm_survivors_radix_for((uint32_t) ompi_comm_size(comm));
    s->fast_path_wish = ompi_comm_survivors_fast_path_bytes((uint32_t) ompi_comm_size(comm), radix);
    /* nothing to agree on where the fast path cannot be taken */
    s->fast_path_agreed = ompi_comm_size(comm) < 2 || ompi_comm_size(comm) > BTL_FT_SURVIVORS_FAST_MAX_SIZE;
    opal_output_verbose(5, ompi_ftmpi_output_handle,
                        "%s survivor allreduce on %s: radix %u, fast path up to %" PRIu64 " bytes allowed here",
                        OMPI_NAME_PRINT(OMPI_PROC_MY_NAME), comm->c_name, radix, s->fast_path_wish);
    s->machine = btl_ft_survivors_create((uint32_t) ompi_comm_size(comm), (uint32_t) ompi_comm_rank(comm),
                                         radix, 0, &callbacks);
    if (NULL == s->machine) {
        free(s);
        return MPI_ERR_NO_MEM;
    }
    rc = ompi_attr_set_c(COMM_ATTR, comm, &comm->c_keyhash, survivors_keyval, s, false);
    if (OMPI_SUCCESS != rc) {
        btl_ft_survivors_destroy(s->machine);
        free(s);
        return MPI_ERR_INTERN;
    }
    if (NULL == survivors_all) {
        opal_progress_register_lp(survivors_progress);
    }
    s->next = survivors_all;
    survivors_all = s;
    if (ompi_comm_survivors_preconnect()) {
        btl_ft_survivors_greet(s->machine);
    }
    *out = s;
    return MPI_SUCCESS;
}

/* After a call returned: forward a result to processes a later failure
 * orphaned, report it to a new root, answer late partials. Each of these
 * follows a failure this process learns too (the detector tells every
 * process), so while it knows of none the call's own drain is enough:
 * stepping here costs an improbe and a nested opal_progress, in every
 * MPI call of the application (every 8th opal_progress). */
static int survivors_progress(void)
{
    if (0 == ompi_group_size(ompi_group_all_failed_procs)) {
        return 0;
    }
    for (survivors_comm_t *s = survivors_all; s != NULL; s = s->next) {
        if (!s->busy) {
            s->busy = true;
            survivors_step(s, false);
            s->busy = false;
        }
    }
    return 0;
}

/* At mpi_ft_verbose 1, what a call that takes long has seen so far. */
static void survivors_report(survivors_comm_t *s, const char *what)
{
    btl_ft_survivors_counts_t c;
    char state[512];
    if (opal_output_get_verbosity(ompi_ftmpi_output_handle) < 1) {
        return;
    }
    c = btl_ft_survivors_counters(s->machine);
    btl_ft_survivors_describe(s->machine, state, sizeof(state));
    opal_output_verbose(1, ompi_ftmpi_output_handle,
                        "%s survivor allreduce on %s %s: sent %" PRIu64 " exchanges, %" PRIu64 " partials, %"
                        PRIu64 " results, %" PRIu64 " holds; received %" PRIu64 " (dropped: %" PRIu64
                        " malformed, %" PRIu64 " from failed, %" PRIu64 " out of sequence, %" PRIu64
                        " overlapping, %" PRIu64 " late exchanges); %zu sends pending; ULFM knows %d failed; %s",
                        OMPI_NAME_PRINT(OMPI_PROC_MY_NAME), s->comm->c_name, what, c.exchanges_sent,
                        c.partials_sent, c.results_sent, c.holds_sent, c.received, c.malformed, c.from_failed,
                        c.out_of_sequence, c.overlapping, c.late_exchanges, s->send_count, s->failed_seen, state);
}

static int survivors_contributor_group(survivors_comm_t *s, ompi_group_t **contributors)
{
    uint32_t *pairs, whole[2];
    size_t ranges = btl_ft_survivors_contributors(s->machine, whole, 1);
    int *ranks, count = 0, rc;
    /* every rank, as when nothing failed: the communicator's group, as
     * MPI_Comm_group gives it */
    if (1 == ranges && 0 == whole[0] && (uint32_t) ompi_comm_size(s->comm) == whole[1]) {
        return OMPI_SUCCESS == ompi_comm_group(s->comm, contributors) ? MPI_SUCCESS : MPI_ERR_INTERN;
    }
    pairs = malloc(sizeof(*pairs) * 2 * (ranges ? ranges : 1));
    ranks = malloc(sizeof(*ranks) * (size_t) ompi_comm_size(s->comm));
    if (NULL == pairs || NULL == ranks) {
        free(pairs);
        free(ranks);
        return MPI_ERR_NO_MEM;
    }
    btl_ft_survivors_contributors(s->machine, pairs, ranges);
    for (size_t i = 0; i < ranges; ++i) {
        for (uint32_t r = pairs[2 * i]; r < pairs[2 * i + 1]; ++r) {
            ranks[count++] = (int) r;
        }
    }
    rc = ompi_group_incl(s->comm->c_local_group, count, ranks, contributors);
    free(pairs);
    free(ranks);
    return OMPI_SUCCESS == rc ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

/* One call of the machine on `value`, driven to its end here: MPI_SUCCESS
 * when it holds the result, MPI_ERR_PROC_FAILED when the others declared
 * this process failed, MPI_ERR_INTERN when the call could not begin. */
static int survivors_run(survivors_comm_t *s, const void *value, size_t bytes, int count, ompi_datatype_t *datatype,
                         ompi_op_t *op)
{
    int status;
    s->busy = true;
    s->op = op;
    s->datatype = datatype;
    s->count = count;
    /* failures first, but no progress before the first send: on an
     * oversubscribed node a progress that finds nothing yields the CPU,
     * and the peers waiting for this process's message wait with it */
    survivors_feed_failures(s);
    if (0 != btl_ft_survivors_begin(s->machine, value, bytes)) {
        s->busy = false;
        return MPI_ERR_INTERN;
    }
    status = btl_ft_survivors_status(s->machine);
    for (uint64_t spins = 1; BTL_FT_SURVIVORS_RUNNING == status; ++spins) {
        if (0 == (spins & ((UINT64_C(1) << 18) - 1))) {
            survivors_report(s, "still waits");
        }
        survivors_step(s, true);
        status = btl_ft_survivors_status(s->machine);
    }
    survivors_cancel_posted(s); /* none is left, unless a failure ended the call */
    s->busy = false;
    return BTL_FT_SURVIVORS_DONE == status ? MPI_SUCCESS : MPI_ERR_PROC_FAILED;
}

/* The communicator's first call is its processes' agreement on the fast
 * path's bound: the smallest of what each would allow. The processes must
 * take the fast path all or none (a process on it waits for exchanges
 * that one on the tree never sends), and what each allows by default
 * depends on whether its own node is oversubscribed. The agreement is a
 * survivor allreduce of its own: every survivor returns the same. */
static int survivors_agree_on_fast_path(survivors_comm_t *s)
{
    uint64_t allowed = s->fast_path_wish, agreed;
    int rc = survivors_run(s, &allowed, sizeof(allowed), 1, MPI_UINT64_T, MPI_MIN);
    if (MPI_SUCCESS != rc) {
        return rc;
    }
    memcpy(&agreed, btl_ft_survivors_result(s->machine), sizeof(agreed));
    (void) btl_ft_survivors_set_fast_max_bytes(s->machine, (size_t) agreed); /* the call ended */
    s->fast_path_agreed = true;
    opal_output_verbose(5, ompi_ftmpi_output_handle,
                        "%s survivor allreduce on %s: fast path up to %" PRIu64 " bytes, agreed",
                        OMPI_NAME_PRINT(OMPI_PROC_MY_NAME), s->comm->c_name, agreed);
    return MPI_SUCCESS;
}

int ompi_comm_allreduce_survivors(const void *sendbuf, void *recvbuf, int count, ompi_datatype_t *datatype,
                                  ompi_op_t *op, ompi_communicator_t *comm, ompi_group_t **contributors)
{
    survivors_comm_t *s;
    ptrdiff_t extent = 0;
    size_t bytes;
    char *why = NULL;
    int rc;

    if (OMPI_COMM_IS_INTER(comm)) {
        return MPI_ERR_COMM;
    }
    if (!ompi_datatype_is_predefined(datatype)) {
        return MPI_ERR_TYPE;
    }
    if (!ompi_op_is_commute(op) || !ompi_op_is_valid(op, datatype, &why, "MPIX_Comm_allreduce_survivors")) {
        free(why);
        return MPI_ERR_OP;
    }
    rc = survivors_of(comm, &s);
    if (MPI_SUCCESS != rc) {
        return rc;
    }
    if (!s->fast_path_agreed) {
        rc = survivors_agree_on_fast_path(s);
        if (MPI_SUCCESS != rc) {
            return rc;
        }
    }
    ompi_datatype_type_extent(datatype, &extent);
    bytes = (size_t) count * (size_t) extent;
    rc = survivors_run(s, MPI_IN_PLACE == sendbuf ? recvbuf : sendbuf, bytes, count, datatype, op);
    if (MPI_SUCCESS != rc) {
        return rc;
    }
    memcpy(recvbuf, btl_ft_survivors_result(s->machine), bytes);
    return survivors_contributor_group(s, contributors);
}

#endif /* OPAL_ENABLE_FT_MPI */
