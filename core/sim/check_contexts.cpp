// Compile-time checks that both host contexts implement the kernel context interface.
#include "core/sim/context.hpp"
#include "core/sim/native_context.hpp"
#include "core/sim/sim_context.hpp"

namespace headroom::sim {
static_assert(kernel_context<sim_context>);
static_assert(kernel_context<native_context>);
}  // namespace headroom::sim
