// One function per catalogue class check (class_checks.hpp), each in its own file of this folder.
#pragma once

#include <vector>

#include "core/check/class_checks.hpp"

namespace headroom {

// C2: Triton's 2D/3D threshold from another geometry than the group's own (a performance bug).
void check_c2_path_choice(const class_scope& s, std::vector<class_finding>& out);

}  // namespace headroom
