// A thread that holds CPU 0 at SCHED_FIFO, for the tests that need a
// process or a thread runnable and kept off the CPU (test_proc_stat,
// test_lifeline): pinned to CPU 0 while the hog spins there, it cannot run.
#pragma once

#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace {

// CPU 0 alone, as an affinity mask.
cpu_set_t cpu0()
{
    cpu_set_t first{};
    CPU_ZERO(&first);
    CPU_SET(0, &first);
    return first;
}

// A SCHED_FIFO thread that holds CPU 0 for up to 200 ms (under the default
// real-time limit of 950 ms a second), until released; holding() is false
// where real-time scheduling is refused.
struct cpu0_hog {
    cpu0_hog()
        : thread([this] {
              const cpu_set_t first = cpu0();
              sched_setaffinity(0, sizeof(first), &first);
              sched_param top{};
              top.sched_priority = 1;
              if (0 != sched_setscheduler(0, SCHED_FIFO, &top)) return;
              held.store(true);
              const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
              while (!stop.load() && std::chrono::steady_clock::now() < until) {
              }
          })
    {
        for (int tries = 0; tries < 1000 && !held.load(); ++tries) usleep(100);
    }
    ~cpu0_hog() { release(); }
    bool holding() const { return held.load(); }
    void release()
    {
        stop.store(true);
        if (thread.joinable()) thread.join();
    }
    std::atomic<bool> held{false}, stop{false};
    std::thread thread;
};

}  // namespace
