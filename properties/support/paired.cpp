// Differential executor (paired.hpp).
#include "properties/support/paired.hpp"

#include <map>
#include <variant>

namespace headroom::props {

namespace {

std::map<std::string, int64_t> extents(const observation& o) {
  std::map<std::string, int64_t> m;
  for (const auto& t : o.touched) m[t.name] = t.elems;
  return m;
}

int64_t builder_heads_of(const any_plan& p) {
  return std::visit([](const auto& x) { return x.builder_heads; }, p);
}

}  // namespace

std::string describe(const std::set<verdict>& s) {
  std::string out;
  for (const auto& [g, inv, buf] : s) out += " [group " + std::to_string(g) + " " + inv + " " + buf + "]";
  return out.empty() ? " (none)" : out;
}

observation paired_executor::run(const run_request& r) {
  const observation m = model_.run(r);
  if (std::holds_alternative<fi_prefill_plan>(*r.plan)) return m;  // not simulated
  observation s;
  try {
    s = other_.run(r);
  } catch (const std::exception& e) {
    disagreements_.push_back(std::string(other_.name()) + " threw on " + r.layer->name + ": " + e.what());
    return m;
  }
  compare(r, m, s);
  return s;
}

void paired_executor::compare(const run_request& r, const observation& m, const observation& s) {
  const auto& buffers = plan_buffers(*r.plan);
  const auto me = extents(m), se = extents(s);
  const std::string where = " (layer " + r.layer->name + ", " + std::to_string(r.layer->num_heads) +
                            " heads, " + std::to_string(r.b->num_seqs()) + " requests)";
  run_record rec;
  rec.plan = std::holds_alternative<triton_plan>(*r.plan) ? "triton" : "fi_decode";
  rec.layer_heads = r.layer->num_heads;
  rec.builder_heads = builder_heads_of(*r.plan);
  rec.in_bounds = s.oob_count == 0;
  for (const auto& b : buffers) {
    const int64_t mx = me.count(b.name) ? me.at(b.name) : 0;
    const int64_t sx = se.count(b.name) ? se.at(b.name) : 0;
    if (mx != sx)
      disagreements_.push_back(b.name + ": model touches " + std::to_string(mx) + " elements, " +
                               other_.name() + " " + std::to_string(sx) + where);
    const bool m_over = mx > b.capacity_elems(), s_over = sx > b.capacity_elems();
    if (m_over != s_over)
      disagreements_.push_back(b.name + ": model says " + (m_over ? "overflow" : "fits") + ", " +
                               other_.name() + " " + (s_over ? "overflows" : "fits") + where);
  }
  for (const auto& a : s.oob) {
    bool planned = false;
    for (const auto& b : buffers) planned = planned || a.buffer == b.name;
    if (!planned)
      disagreements_.push_back(std::string(other_.name()) + " accessed " + a.buffer + "[" +
                               std::to_string(a.index) + "] past extent " +
                               std::to_string(a.extent) + where);
  }
  rec.obs = s;
  records_.push_back(std::move(rec));
}

}  // namespace headroom::props
