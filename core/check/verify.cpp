// headroom verify: a plan file through the checker's own sweep, each (tp, backend) a case whose
// builders are the plan's dumps; violations renamed to the buffers' names in the plan.
#include <cctype>
#include <set>

#include "core/check/plan_file.hpp"

namespace headroom {
namespace {

bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// `text` with every whole-word occurrence of `from` replaced by `to`.
std::string replace_word(const std::string& text, const std::string& from, const std::string& to) {
  if (from == to || from.empty()) return text;
  std::string out;
  std::size_t i = 0;
  while (i < text.size()) {
    const std::size_t k = text.find(from, i);
    if (k == std::string::npos) break;
    const bool starts = k == 0 || !ident_char(text[k - 1]);
    const bool ends = k + from.size() == text.size() || !ident_char(text[k + from.size()]);
    out += text.substr(i, k - i);
    out += starts && ends ? to : from;
    i = k + from.size();
  }
  return out + text.substr(i);
}

void rename_buffers(violation& v) {
  if (v.buffer.empty()) return;
  const std::string engine_name = engine_buffer_name(v.be, v.buffer);
  v.detail = replace_word(v.detail, v.buffer, engine_name);
  v.buffer = engine_name;
}

}  // namespace

report run_verify(const plan_file& p, executor& ex, std::optional<double> tight) {
  std::vector<check_case> bases;
  std::vector<std::string> notes = p.notes;
  for (const auto& r : p.ranks) {
    std::set<backend> backends;
    for (const auto& g : r.groups) {
      backends.insert(g.be);
      for (const auto& name : unchecked_buffers(g))
        notes.push_back(std::string(to_string(g.be)) + " tp " + std::to_string(r.tp) + " group " +
                        std::to_string(g.index) + ": buffer " + name + " is not checked (no kernel of headroom's reads it)");
    }
    for (backend be : backends) {
      check_case base = make_case(p.model, r.tp, be, policy::per_layer, grouping::heads, p.hybrid,
                                  p.block_size, 0);
      base.engine = p.engine;
      base.flashinfer = p.flashinfer;
      base.builders = r.groups;
      bases.push_back(std::move(base));
    }
  }
  report rep = run_sweep(bases, check_options{}.decode_seq_len, tight, ex);
  for (auto& v : rep.violations) rename_buffers(v);
  rep.notes.insert(rep.notes.begin(), notes.begin(), notes.end());
  return rep;
}

}  // namespace headroom
