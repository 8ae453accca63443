// Writes what FA3's own rules computed for the first calls of a comparison run as rows of
// tests/backends/fa3_schedules.tsv (the golden table tests/backends/fa3_golden_test.cpp holds the
// mirror to in every build, checkout or not). Only when $HEADROOM_FA3_GOLDEN_OUT names a file: the
// rows are appended, so one file takes the fork's and Dao-AILab's runs in turn; an empty file gets
// the table's header first, and each run a comment line naming its tree and commit.
#pragma once

#include <cstdlib>
#include <fstream>
#include <string>

#include "tests/engine_target/fa3_draw.hpp"
#include "tests/support/fa3_answer.hpp"

namespace headroom {

class fa3_golden_writer {
 public:
  fa3_golden_writer(const char* tree, const char* commit, int rows) : tree_(tree), left_(rows) {
    const char* path = std::getenv("HEADROOM_FA3_GOLDEN_OUT");
    if (!path || !*path) return;
    out_.open(path, std::ios::app);
    if (out_.tellp() == 0)
      out_ << "# FA3 schedules computed by FA3's own host rules and headers (SM90, 132 SMs), the engines' "
              "numbers for tests/backends/fa3_golden_test.cpp;\n# written by tests/engine_target/"
              "fa3_schedule_test.cpp and fa3_upstream_schedule_test.cpp with HEADROOM_FA3_GOLDEN_OUT.\n"
              "# "
              "tree\tbatch\tq_heads\tkv_heads\thead_size\thead_size_v\tpage_size\twindow\tmax_seqlen_q\tmax_"
              "seqlen_k\t"
              "num_splits_passed\te4m3\tcausal\tlocal\tblock_m\tblock_n\tnum_splits\thead_swizzle\tentries\n";
    out_ << "# " << tree_ << ": " << commit << ", seed 2026, the first " << rows << " calls\n";
  }
  void add(const drawn_call& d, const fa3_answer& a) {
    if (!out_.is_open() || left_ <= 0) return;
    --left_;
    const fa3_call& c = d.c;
    out_ << tree_ << '\t' << d.batch << '\t' << c.q_heads << '\t' << c.kv_heads << '\t' << c.head_size << '\t'
         << c.head_size_v << '\t' << c.page_size << '\t' << c.window << '\t' << c.max_query_len << '\t'
         << c.max_seq_len << '\t' << d.num_splits << '\t' << c.e4m3 << '\t' << a.causal << '\t' << a.local
         << '\t' << a.block_m << '\t' << a.block_n << '\t' << a.num_splits << '\t' << a.head_swizzle << '\t'
         << a.entries << '\n';
  }

 private:
  std::string tree_;
  int left_;
  std::ofstream out_;
};

}  // namespace headroom
