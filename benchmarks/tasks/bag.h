/*
 * The bag of tasks: what each task computes, how long it runs, and the
 * expected answer. Header-only so tasks.c stays one file that mpicc
 * compiles as a user would.
 *
 * A task t of K iterations adds up (t+1)*k for k < K modulo 2^64: pure
 * arithmetic, no MPI call, whose result has a closed form, so the total of
 * the bag is checked without running the bag twice. The loop is kept from
 * being folded into that closed form by an empty asm that hides the
 * accumulator from the optimiser. Rejected: a task that spins on the clock
 * for its duration, whose result then says nothing about whether it ran.
 */
#ifndef TASKS_BAG_H
#define TASKS_BAG_H

#include <stdint.h>
#include <time.h>

/* CLOCK_MONOTONIC is shared by every process of the machine (emulated
 * nodes included), so a failure's time and a recovery's compare. */
static inline int64_t bag_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Iterations [k0, k1) of task t, added to acc. */
static inline uint64_t bag_run_slice(uint64_t t, uint64_t k0, uint64_t k1, uint64_t acc)
{
    for (uint64_t k = k0; k < k1; k++) {
        acc += (t + 1) * k;
        __asm__ __volatile__("" : "+r"(acc));
    }
    return acc;
}

/* What bag_run_slice over [0, K) returns, modulo 2^64 as the loop wraps. */
static inline uint64_t bag_expected_value(uint64_t t, uint64_t iters)
{
    if (iters == 0) return 0;
    uint64_t pairs = iters % 2 == 0 ? (iters / 2) * (iters - 1) : iters * ((iters - 1) / 2);
    return (t + 1) * pairs;
}

static inline uint64_t bag_mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

struct bag_shape {
    int tasks;          /* how many */
    double short_ms;    /* short tasks: 0.2 ms up to this */
    double long_ms;     /* every long_every-th task: 1 to 1.5 times this */
    int long_every;     /* 0: no long task */
    uint64_t seed;
};

/* Nominal duration of task t in ms: most tasks short, skewed towards the
 * sub-millisecond end, and every long_every-th one long. */
static inline double bag_task_ms(const struct bag_shape *s, int t)
{
    double u = (double)(bag_mix64(s->seed ^ (uint64_t)t) >> 11) / 9007199254740992.0;
    if (s->long_every > 0 && t % s->long_every == s->long_every - 1)
        return s->long_ms * (1.0 + 0.5 * u);
    return 0.2 + (s->short_ms - 0.2) * u * u;
}

static inline uint64_t bag_task_iters(const struct bag_shape *s, int t, double iters_per_ms)
{
    uint64_t iters = (uint64_t)(bag_task_ms(s, t) * iters_per_ms);
    return iters ? iters : 1;
}

/* Iterations per ms of this process, measured over about `ms`. */
static inline double bag_calibrate(double ms)
{
    uint64_t done = 0, acc = 0, step = 1 << 16;
    int64_t start = bag_now_ns(), end = start + (int64_t)(ms * 1e6);
    while (bag_now_ns() < end) {
        acc = bag_run_slice(1, done, done + step, acc);
        done += step;
    }
    __asm__ __volatile__("" : : "r"(acc));
    return (double)done / ((double)(bag_now_ns() - start) / 1e6);
}

#endif
