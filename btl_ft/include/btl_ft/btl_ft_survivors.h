/* The C ABI of the survivor allreduce (btl_ft/survivor_allreduce.hpp), for
 * the Open MPI shim: an allreduce that completes despite failures, every
 * survivor returning the same value reduced over the same contributors.
 *
 * One object per communicator, driven by one thread at a time: the caller
 * feeds it failures (btl_ft_survivors_failed), the messages it receives
 * (btl_ft_survivors_message), and begins each call; the object sends through
 * `send` and combines values through `combine`, both called synchronously
 * from within those functions. */
#ifndef BTL_FT_SURVIVORS_H
#define BTL_FT_SURVIVORS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct btl_ft_survivors btl_ft_survivors_t;

typedef struct btl_ft_survivors_callbacks {
    void *context;
    /* Sends `length` bytes to `peer`, at most once, in any order; they may be
     * lost if either end fails. The bytes are valid during the call only. */
    void (*send)(void *context, uint32_t peer, const void *bytes, size_t length);
    /* into = into (+) value, both `length` bytes: an associative and
     * commutative operation. */
    void (*combine)(void *context, void *into, const void *value, size_t length);
} btl_ft_survivors_callbacks_t;

enum {
    BTL_FT_SURVIVORS_IDLE = 0,     /* no call yet */
    BTL_FT_SURVIVORS_RUNNING = 1,  /* the current call has no result here yet */
    BTL_FT_SURVIVORS_DONE = 2,     /* btl_ft_survivors_result() holds it */
    BTL_FT_SURVIVORS_EXCLUDED = 3  /* the others declared this process failed */
};

typedef struct btl_ft_survivors_counts {
    uint64_t partials_sent, results_sent, holds_sent, received;
    uint64_t malformed, from_failed, out_of_sequence, overlapping, conflicts, root_takeovers;
    uint64_t exchanges_sent, fast_done, fast_fallbacks, late_exchanges;
    uint64_t greetings_sent, greetings;
} btl_ft_survivors_counts_t;

/* The radix of the k-nomial tree: each process has up to radix - 1 children
 * per level. Seed 001 chooses it for the job's size and the network's ratio
 * of latency to per-message overhead, as the one of lowest latency in a
 * LogP model; BTL_FT_SURVIVORS_RADIX_AUTO asks the caller to do the same
 * (btl_ft_survivors_best_radix). In the seed's setting (L/o = 10) that is
 * a flat tree up to 8 processes, 8 at 64, 11 at 1024 and 9 at 2^16. */
#define BTL_FT_SURVIVORS_RADIX_AUTO 0
#define BTL_FT_SURVIVORS_RADIX_MIN 2
#define BTL_FT_SURVIVORS_RADIX_MAX 65536
#define BTL_FT_SURVIVORS_DEFAULT_RADIX BTL_FT_SURVIVORS_RADIX_AUTO
/* The ratio of a message's latency to its overhead at each end (L/o):
 * seed 001's §5.2 setting. */
#define BTL_FT_SURVIVORS_DEFAULT_LATENCY_RATIO 10.0

/* NULL when the radix is valid (BTL_FT_SURVIVORS_RADIX_AUTO, or MIN to
 * MAX), else the rule it breaks, as "must be 0 (chosen for each
 * communicator) or between 2 and 65536". */
const char *btl_ft_survivors_radix_problem(uint32_t radix);
/* NULL when the ratio is valid (0.01 to 10000), else the rule it breaks. */
const char *btl_ft_survivors_latency_ratio_problem(double latency_ratio);
/* The radix of lowest failure-free latency for `size` processes and a
 * valid latency ratio (btl_ft/allreduce_model.hpp): the same everywhere
 * for the same arguments. About 20 ms at 2^16 processes. */
uint32_t btl_ft_survivors_best_radix(uint32_t size, double latency_ratio);

/* Values up to this many bytes first take the fast path, recursive
 * doubling while no failure is known, in communicators of up to
 * BTL_FT_SURVIVORS_FAST_MAX_SIZE processes (0: never; survivor_allreduce.hpp)
 * where it pays (btl_ft_survivors_fast_path_pays). */
#define BTL_FT_SURVIVORS_DEFAULT_FAST_MAX_BYTES 512
#define BTL_FT_SURVIVORS_FAST_MAX_SIZE 64

/* 1 when the fast path's latency beats the tree's at `radix` for `size`
 * processes in the LogP model with a valid latency ratio, and `size` is
 * within BTL_FT_SURVIVORS_FAST_MAX_SIZE; else 0. */
int btl_ft_survivors_fast_path_pays(uint32_t size, uint32_t radix, double latency_ratio);
/* The same where processes yield the CPU while they wait (an oversubscribed
 * node): 1 only where recursive doubling takes fewer rounds than the flat
 * tree's three steps, at 2 and 4 processes (allreduce_model.hpp says why). */
int btl_ft_survivors_fast_path_pays_yielding(uint32_t size);

/* NULL when size is 0, self >= size, the radix is not between MIN and MAX
 * (resolve RADIX_AUTO first), or memory runs out. */
btl_ft_survivors_t *btl_ft_survivors_create(uint32_t size, uint32_t self, uint32_t radix, size_t fast_max_bytes,
                                            const btl_ft_survivors_callbacks_t *callbacks);
void btl_ft_survivors_destroy(btl_ft_survivors_t *survivors);
/* The fast path's bound (the fast_max_bytes of create), between calls; -1
 * (and nothing changes) while a call runs here. The processes of a
 * communicator must take the fast path all or none: each sets the same
 * bound before the same call (the shim sets the one its processes agreed
 * on at their first call). */
int btl_ft_survivors_set_fast_max_bytes(btl_ft_survivors_t *survivors, size_t fast_max_bytes);
/* Sends the greetings that open the links a repair would use first
 * (survivor_allreduce::greet): once, before the first call, where the
 * transport connects on a first message. */
void btl_ft_survivors_greet(btl_ft_survivors_t *survivors);
/* Ranks known failed, in any order, at any time. */
void btl_ft_survivors_failed(btl_ft_survivors_t *survivors, const uint32_t *ranks, size_t count);
/* Begins the next call with this process's value; -1 (and nothing begins)
 * while the current call still runs here. */
int btl_ft_survivors_begin(btl_ft_survivors_t *survivors, const void *value, size_t length);
/* A message from `from`; a malformed one is dropped and counted. */
void btl_ft_survivors_message(btl_ft_survivors_t *survivors, uint32_t from, const void *bytes, size_t length);
int btl_ft_survivors_status(const btl_ft_survivors_t *survivors);
/* The one peer whose message the current call waits for, when it waits for
 * one alone (while no failure is known: a step of the fast path, or the
 * result on the tree), and in *max_bytes the longest message that peer
 * may send first: the caller may then receive from that peer alone, into
 * that many bytes, as a collective does, and leave the others' messages
 * queued until the call waits for any peer. Else
 * BTL_FT_SURVIVORS_ANY_PEER. */
#define BTL_FT_SURVIVORS_ANY_PEER UINT32_MAX
uint32_t btl_ft_survivors_awaited(const btl_ft_survivors_t *survivors, size_t *max_bytes);
/* Status DONE: the result (as long as the value given to begin). */
const void *btl_ft_survivors_result(const btl_ft_survivors_t *survivors);
/* Status DONE: the contributors as ranges [begin, end), written to `pairs`
 * (begin, end, begin, end...) up to `max_ranges`; returns how many there are. */
size_t btl_ft_survivors_contributors(const btl_ft_survivors_t *survivors, uint32_t *pairs, size_t max_ranges);
btl_ft_survivors_counts_t btl_ft_survivors_counters(const btl_ft_survivors_t *survivors);
/* One line of what the object waits for (root, failed ranks, each call's
 * combined ranks and decision), cut to fit `capacity` with its NUL. */
void btl_ft_survivors_describe(const btl_ft_survivors_t *survivors, char *text, size_t capacity);

#ifdef __cplusplus
}
#endif

#endif /* BTL_FT_SURVIVORS_H */
