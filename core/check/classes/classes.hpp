// One function per catalogue class check (class_checks.hpp), each in its own file of this folder.
#pragma once

#include <vector>

#include "core/check/class_checks.hpp"

namespace headroom {

// C2: Triton's 2D/3D threshold from another geometry than the group's own (a performance bug).
void check_c2_path_choice(const class_scope& s, std::vector<class_finding>& out);
// C9: heads padded to the MLA kernel's tile by the divisors-only helpers.
void check_c9_head_pad(const class_scope& s, std::vector<class_finding>& out);
// C11: the Mamba state column computed in the smallest group's block size.
void check_c11_mamba_index(const class_scope& s, std::vector<class_finding>& out);

}  // namespace headroom
