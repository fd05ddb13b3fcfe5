// An always-on assertion for the invariants of the detector core. The core
// runs inside libmpi and inside the simulator; a broken invariant there (a
// dead process chosen as emitter, a message routed to a non-participant) is a
// protocol bug whose symptom would otherwise surface much later as a hang in
// MPIX_Comm_agree, so it stops the process at once with the location.
//
// Rejected alternative: <cassert>, which NDEBUG silently removes from the
// release builds of Open MPI where the detector actually runs.
#pragma once

namespace btl_ft::detail {
[[noreturn]] void assert_failed(const char* condition, const char* what, const char* file, int line);
}  // namespace btl_ft::detail

#define BTL_FT_ASSERT(condition, what)                                                  \
    do {                                                                                \
        if (!(condition)) [[unlikely]] {                                                \
            ::btl_ft::detail::assert_failed(#condition, (what), __FILE__, __LINE__);    \
        }                                                                               \
    } while (false)
