// Checks an object's invariants when one of its methods is entered and
// again when it returns, however it returns: the sub-protocol types
// (confirmation, probe_window, quorum_episode, census) declare one at the
// top of every method that changes them. Their checks are O(1) or O(window),
// since the simulator calls them millions of times.
#pragma once

namespace btl_ft {

template <class T>
class invariants_checked {
public:
    explicit invariants_checked(const T& object) : object_(object) { object_.check(); }
    ~invariants_checked() { object_.check(); }
    invariants_checked(const invariants_checked&) = delete;
    invariants_checked& operator=(const invariants_checked&) = delete;

private:
    const T& object_;
};

}  // namespace btl_ft
