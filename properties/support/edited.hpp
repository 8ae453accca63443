// A planted bug for the properties' own tests: an executor that runs another and edits every
// observation before handing it on (one element short, a lost count, 32-bit wrapping). A property
// that passes with it in place cannot fail, so each suite shows its property failing on one.
#pragma once

#include "core/check/executor.hpp"

namespace headroom::props {

template <class Edit>
class edited_executor final : public executor {
 public:
  edited_executor(executor& inner, Edit edit) : inner_(inner), edit_(edit) {}
  target_kind kind() const override { return inner_.kind(); }
  observation run(const run_request& r) override {
    observation o = inner_.run(r);
    edit_(o);
    return o;
  }

 private:
  executor& inner_;
  Edit edit_;
};

// Every touched extent one element short.
inline void one_element_short(observation& o) {
  for (auto& t : o.touched) t.elems -= 1;
}

}  // namespace headroom::props
