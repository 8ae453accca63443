// Running the headroom command from the CLI tests: exit code, stdout and stderr apart. The binary
// is the build's own unless HEADROOM_BIN is set (to run the same tests against another build).
#pragma once

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>
#include <sys/wait.h>
#include <unistd.h>

namespace headroom_test {

namespace fs = std::filesystem;

struct cli_result {
  int code = -1;  // exit status, 128 + N when killed by signal N
  std::string out, err;
  long err_lines() const { return static_cast<long>(std::count(err.begin(), err.end(), '\n')); }
};

inline std::string headroom_bin() {
  const char* env = std::getenv("HEADROOM_BIN");
  return env && *env ? env : HEADROOM_BIN;
}

inline std::string source_path(const std::string& rel) {
  return std::string(HEADROOM_SOURCE_DIR) + "/" + rel;
}

// A fresh folder for one test (removed first if a previous run left it).
inline fs::path scratch(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("headroom_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// One Llama layer of `heads` query heads and `kv` kv heads of `head_dim` (hidden size 128 a head), as
// dir/name.
inline std::string llama_config(const fs::path& dir, const std::string& name, int heads, int kv,
                                int head_dim = 128) {
  const fs::path f = dir / name;
  std::ofstream(f) << R"({"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": )"
                   << heads * 128 << R"(, "num_attention_heads": )" << heads << R"(, "num_key_value_heads": )"
                   << kv << R"(, "head_dim": )" << head_dim
                   << R"(, "num_hidden_layers": 1, "vocab_size": 32000, "torch_dtype": "bfloat16"})";
  return f.string();
}

inline std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// What is wrong with `r` as bad input's answer (exit 2, nothing on stdout, one line on stderr holding
// every piece), or "" when nothing is.
inline std::string bad_input_problem(const cli_result& r, const std::vector<std::string>& pieces) {
  if (r.code != 2) return "exit " + std::to_string(r.code) + ", not 2: " + r.err;
  if (!r.out.empty()) return "stdout: " + r.out;
  if (std::count(r.err.begin(), r.err.end(), '\n') != 1) return "not one line: " + r.err;
  for (const auto& p : pieces)
    if (r.err.find(p) == std::string::npos) return "no '" + p + "' in " + r.err;
  return "";
}

// Runs `prefix headroom args` through sh (prefix: e.g. "ulimit -f 2;" or "cd DIR &&").
inline cli_result run_cli(const std::string& args, const std::string& prefix = "") {
  const fs::path out = fs::temp_directory_path() / ("headroom_out_" + std::to_string(::getpid()));
  const fs::path err = fs::temp_directory_path() / ("headroom_err_" + std::to_string(::getpid()));
  const std::string cmd =
      prefix + " " + headroom_bin() + " " + args + " >" + out.string() + " 2>" + err.string() + " </dev/null";
  const int status = std::system(cmd.c_str());
  cli_result r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = slurp(out);
  r.err = slurp(err);
  fs::remove(out);
  fs::remove(err);
  return r;
}

}  // namespace headroom_test
