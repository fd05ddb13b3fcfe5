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
} btl_ft_survivors_counts_t;

/* The radix of the k-nomial tree: each process has up to radix - 1 children
 * per level. Seed 001 chooses it by simulation for the machine's ratio of
 * latency to overhead (ftsim allreduce searches it). The default, 8: in the
 * seed's setting (L/o = 10) the best radix is 6 to 14 from 8 to 2^16
 * processes, and 8 is within 10 % of its latency at every size ftsim
 * tried but 16 (18 %), where 4 is up to 37 % slower; on one host of 8 and
 * 16 processes 8 was faster than 4 too. */
#define BTL_FT_SURVIVORS_RADIX_MIN 2
#define BTL_FT_SURVIVORS_RADIX_MAX 65536
#define BTL_FT_SURVIVORS_DEFAULT_RADIX 8

/* NULL when the radix is valid, else the rule it breaks, as
 * "must be between 2 and 65536". */
const char *btl_ft_survivors_radix_problem(uint32_t radix);

/* NULL when size is 0, self >= size, the radix is invalid, or memory runs
 * out. */
btl_ft_survivors_t *btl_ft_survivors_create(uint32_t size, uint32_t self, uint32_t radix,
                                            const btl_ft_survivors_callbacks_t *callbacks);
void btl_ft_survivors_destroy(btl_ft_survivors_t *survivors);
/* Ranks known failed, in any order, at any time. */
void btl_ft_survivors_failed(btl_ft_survivors_t *survivors, const uint32_t *ranks, size_t count);
/* Begins the next call with this process's value; -1 (and nothing begins)
 * while the current call still runs here. */
int btl_ft_survivors_begin(btl_ft_survivors_t *survivors, const void *value, size_t length);
/* A message from `from`; a malformed one is dropped and counted. */
void btl_ft_survivors_message(btl_ft_survivors_t *survivors, uint32_t from, const void *bytes, size_t length);
int btl_ft_survivors_status(const btl_ft_survivors_t *survivors);
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
