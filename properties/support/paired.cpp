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
  return std::visit(
      [](const auto& x) -> int64_t {
        if constexpr (requires { x.builder_heads; })
          return x.builder_heads;
        else
          return 0;  // an engine step's metadata or the offset probe
      },
      p);
}

const char* plan_name(const any_plan& p) {
  constexpr const char* names[] = {"triton",       "fi_decode", "fi_prefill",   "fa3",
                                   "request_meta", "mqa_meta",  "offset_probe", "fi_prefill_sm90"};
  return names[p.index()];
}

bool is_shared(const std::string& name) { return name.rfind("shared:", 0) == 0; }

bool has_oob(const observation& o, const std::string& name) {
  for (const auto& a : o.oob)
    if (a.buffer == name) return true;
  return false;
}

}  // namespace

std::string describe(const std::set<verdict>& s) {
  std::string out;
  for (const auto& [g, inv, buf] : s) out += " [group " + std::to_string(g) + " " + inv + " " + buf + "]";
  return out.empty() ? " (none)" : out;
}

observation paired_executor::run(const run_request& r) {
  const observation m = model_.run(r);
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
  rec.plan = plan_name(*r.plan);
  rec.attention = is_attention_plan(*r.plan);
  rec.layer_heads = r.layer->num_heads;
  rec.builder_heads = builder_heads_of(*r.plan);
  rec.in_bounds = s.oob_count == 0;
  for (const auto& b : buffers) {
    if (is_shared(b.name)) {  // shared memory: no extents on the simulator, its bounds check instead
      const bool m_over = me.count(b.name) && me.at(b.name) > b.capacity_elems();
      if (m_over != has_oob(s, b.name))
        disagreements_.push_back(b.name + ": model says " + (m_over ? "overflow" : "fits") + ", " +
                                 other_.name() + (m_over ? " saw no access past it" : " read past it") +
                                 where);
      continue;
    }
    const int64_t mx = me.count(b.name) ? me.at(b.name) : 0;
    const int64_t sx = se.count(b.name) ? se.at(b.name) : 0;
    // A launch the simulator stopped after too many violations ran only its first blocks: what it
    // touched is a lower bound of the model's extent, not the extent.
    if (s.incomplete ? sx > mx : mx != sx)
      disagreements_.push_back(b.name + ": model touches " + std::to_string(mx) + " elements, " +
                               other_.name() + " " + std::to_string(sx) +
                               (s.incomplete ? " (stopped early)" : "") + where);
    const bool m_over = mx > b.capacity_elems(), s_over = sx > b.capacity_elems();
    if (m_over != s_over)
      disagreements_.push_back(b.name + ": model says " + (m_over ? "overflow" : "fits") + ", " +
                               other_.name() + " " + (s_over ? "overflows" : "fits") + where);
  }
  if ((m.index_overflows > 0) != (s.index_overflows > 0))
    disagreements_.push_back(std::string("index overflow: model says ") +
                             (m.index_overflows > 0 ? "wraps" : "fits") + ", " + other_.name() + " counted " +
                             std::to_string(s.index_overflows) + where);
  const bool wl_agree = s.incomplete
                            ? (s.worklist_uninitialized_reads > 0) == (m.worklist_uninitialized_reads > 0) &&
                                  s.worklist_uninitialized_reads <= m.worklist_uninitialized_reads
                            : s.worklist_uninitialized_reads == m.worklist_uninitialized_reads;
  if (!wl_agree)
    disagreements_.push_back("reads of never-written work entries: model says " +
                             std::to_string(m.worklist_uninitialized_reads) + ", " + other_.name() +
                             " counted " + std::to_string(s.worklist_uninitialized_reads) + where);
  // Rows no tile covers; an overflow adds rows whose partial states were stored out of bounds (the
  // simulator drops those stores), so the counts compare on in-bounds runs.
  if (s.output_checked && s.oob_count == 0 && m.rows_never_computed != s.rows_never_computed)
    disagreements_.push_back("rows never computed: model says " + std::to_string(m.rows_never_computed) +
                             ", " + other_.name() + " saw " + std::to_string(s.rows_never_computed) + where);
  // Accesses past a buffer the plan does not hold (the inputs: q, query_start, the block table)
  // disagree unless the reference side saw one past the same buffer (a simulator paired with the
  // GPU under a mutant that overruns the engine's persistent metadata, as C3's dummy rows do), or
  // they follow a read of never-written work entries (garbage indices: that read is the finding).
  for (const auto& a : s.oob) {
    if (s.worklist_uninitialized_reads > 0) break;
    bool planned = false;
    for (const auto& b : buffers) planned = planned || a.buffer == b.name;
    if (!planned && !has_oob(m, a.buffer))
      disagreements_.push_back(std::string(other_.name()) + " accessed " + a.buffer + "[" +
                               std::to_string(a.index) + "] past extent " + std::to_string(a.extent) + where);
  }
  rec.obs = s;
  records_.push_back(std::move(rec));
}

}  // namespace headroom::props
