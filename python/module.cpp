// The Python module `headroom` (pybind11): load_config, plan, check, verify and generate, each
// returning plain dicts in the documented JSON forms (docs/plan-schema.md, docs/design.md report
// JSON). Python objects cross as JSON text through the same hardened parser as files, so a dict
// is held to the limits a file is. Bad input raises headroom.InputError (a ValueError) with the
// command line's exit-2 message.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "core/model/loader.hpp"
#include "core/util/json_file.hpp"
#include "generators/hf_form.hpp"
#include "python/bindings.hpp"

namespace py = pybind11;
using nlohmann::json;

namespace {

json to_document(const py::handle& obj, const std::string& name) {
  std::string text;
  try {
    text = py::module_::import("json").attr("dumps")(obj).cast<std::string>();
  } catch (const py::error_already_set& e) {
    throw headroom::input_error(name, "<json>", "(a Python object)",
                                "not JSON-serialisable: " + std::string(e.what()));
  }
  return headroom::parse_json_text(text, name);
}

py::object to_python(const json& j) { return py::module_::import("json").attr("loads")(j.dump()); }

// Whether an argument names a file (str or os.PathLike), and that file's path.
bool is_path(const py::object& obj) { return py::isinstance<py::str>(obj) || py::hasattr(obj, "__fspath__"); }
std::string path_of(const py::object& obj) {
  return py::str(py::module_::import("os").attr("fspath")(obj)).cast<std::string>();
}

// A config or plan argument: a path is read as a file, anything else is a document.
template <class FromPath, class FromJson>
auto read_input(const py::object& obj, const std::string& name, FromPath from_path, FromJson from_json) {
  if (is_path(obj)) return from_path(path_of(obj));
  return from_json(to_document(obj, name), name);
}

headroom::model_geometry config_of(const py::object& config, const std::string& name) {
  return read_input(config, name, headroom::python::config_from_path, headroom::python::config_from_json);
}

std::optional<std::vector<int64_t>> tp_list(const py::object& tp) {
  if (tp.is_none()) return std::nullopt;
  if (py::isinstance<py::int_>(tp)) return std::vector<int64_t>{tp.cast<int64_t>()};
  return tp.cast<std::vector<int64_t>>();
}

// The engine settings keywords (**settings), named as vLLM names them (SGLang's as the command
// line's SGLang flags); None is not given.
// engine_args: vLLM's engine arguments, a dict or the path of a JSON file (read as --engine-args).
void read_settings(const py::kwargs& kw, headroom::python::run_options& o) {
  py::dict given;
  for (const auto& [key, value] : kw) {
    if (value.is_none()) continue;
    if (py::str(key).cast<std::string>() != "engine_args") {
      given[key] = value;
    } else if (py::isinstance<py::str>(value) || py::hasattr(value, "__fspath__")) {
      o.engine_args_name = py::str(py::module_::import("os").attr("fspath")(value)).cast<std::string>();
      o.engine_args = headroom::read_json_file(o.engine_args_name);
    } else {
      o.engine_args = to_document(value, "engine_args");
    }
  }
  o.settings = to_document(given, "arguments");
}

headroom::python::run_options options(const py::object& tp, const std::string& backend,
                                      const std::string& policy, const std::string& grouping,
                                      const std::vector<std::string>& mutants, bool hybrid, bool cuda_graph,
                                      const py::kwargs& settings) {
  headroom::python::run_options o{.tp = tp_list(tp),
                                  .backend = backend,
                                  .policy = policy,
                                  .grouping = grouping,
                                  .target = "model",
                                  .settings = json::object(),
                                  .engine_args = nullptr,
                                  .engine_args_name = "engine_args",
                                  .mutants = mutants,
                                  .hybrid = hybrid,
                                  .cuda_graph = cuda_graph,
                                  .seed = 0,
                                  .tight = std::nullopt};
  read_settings(settings, o);
  return o;
}

}  // namespace

PYBIND11_MODULE(headroom, m) {
  m.doc() = "headroom: attention-metadata sizing checks for LLM inference engines";
  m.attr("plan_schema_version") = headroom::plan_schema_version;
  py::register_exception<headroom::input_error>(m, "InputError", PyExc_ValueError);

  m.def(
      "load_config",
      [](const py::object& config, const std::string& name) {
        return to_python(headroom::to_json(config_of(config, name)));
      },
      py::arg("config"), py::arg("name") = "<config>",
      "A config (path, or a dict: Hugging Face or explicit form) as headroom's explicit form.");
  m.def(
      "plan",
      [](const py::object& config, const py::object& tp, const std::string& backend,
         const std::string& policy, const std::string& grouping, const std::vector<std::string>& mutants,
         bool hybrid, bool cuda_graph, const std::string& name, const py::kwargs& settings) {
        const auto o = options(tp, backend, policy, grouping, mutants, hybrid, cuda_graph, settings);
        return to_python(headroom::python::plan(config_of(config, name), o));
      },
      py::arg("config"), py::kw_only(), py::arg("tp") = py::none(), py::arg("backend") = "",
      py::arg("policy") = "per-layer", py::arg("grouping") = "heads",
      py::arg("mutants") = std::vector<std::string>{}, py::arg("hybrid") = true,
      py::arg("cuda_graph") = false, py::arg("name") = "<config>",
      "The mirror's plan (headroom plan --json) as a dict. Engine settings as keywords named as vLLM "
      "names them (max_num_seqs, max_model_len, max_num_batched_tokens, block_size, kv_cache_dtype, "
      "dtype, num_speculative_tokens, cudagraph_mode, cudagraph_capture_sizes, "
      "max_cudagraph_capture_size, mamba_block_size), engine_flavour (vllm, sglang or vllm-ascend), "
      "SGLang's settings under engine_flavour sglang (max_running_requests, attn_tp_size, gathered_buffer, "
      "enable_two_batch_overlap, attn_cp_size), "
      "flashinfer_decode (tensor-cores, the default, or cuda-cores), flashinfer_prefill (fa2, the default, "
      "fa3: FlashInfer's Hopper PrefillSM90Plan, target model only, or auto: each wrapper's backend as "
      "FlashInfer's backend=\"auto\" picks it), batch_invariant (vLLM's "
      "VLLM_BATCH_INVARIANT: split-KV disabled) "
      "and engine_args: vLLM's engine arguments, a dict or a JSON file's path; the keywords override it.");
  m.def(
      "check",
      [](const py::object& config, const py::object& tp, const std::string& backend,
         const std::string& policy, const std::string& grouping, const std::vector<std::string>& mutants,
         bool hybrid, bool cuda_graph, const std::string& target, uint64_t seed, std::optional<double> tight,
         const std::string& name, const py::kwargs& settings) {
        auto o = options(tp, backend, policy, grouping, mutants, hybrid, cuda_graph, settings);
        o.target = target;
        o.seed = seed;
        o.tight = tight;
        return to_python(headroom::python::check(config_of(config, name), o));
      },
      py::arg("config"), py::kw_only(), py::arg("tp") = py::none(), py::arg("backend") = "",
      py::arg("policy") = "per-layer", py::arg("grouping") = "heads",
      py::arg("mutants") = std::vector<std::string>{}, py::arg("hybrid") = true,
      py::arg("cuda_graph") = false, py::arg("target") = "model", py::arg("seed") = 0,
      py::arg("tight") = py::none(), py::arg("name") = "<config>",
      "The whole-model check (headroom check --json) as a report dict; engine settings as plan takes "
      "them.");
  m.def(
      "verify",
      [](const py::object& plan, const std::string& target, std::optional<double> tight,
         const std::string& name) {
        const auto p = read_input(plan, name, headroom::load_plan, headroom::plan_from_json);
        return to_python(headroom::python::verify(p, target, tight, is_path(plan) ? path_of(plan) : name));
      },
      py::arg("plan"), py::kw_only(), py::arg("target") = "model", py::arg("tight") = py::none(),
      py::arg("name") = "<plan>",
      "Checks a plan (a dict in the plan schema, or its path): the report as a dict.");
  m.def(
      "generate",
      [](uint64_t seed, int max_layers) {
        const auto g = headroom::generators::generate_model(seed, max_layers);
        py::dict d;
        d["seed"] = g.seed;
        d["tp"] = g.tp;
        d["hf_config"] = to_python(g.hf_config);
        d["explicit"] = to_python(g.explicit_form);
        return d;
      },
      py::arg("seed"), py::arg("max_layers") = 6,
      "A seeded random geometry: {seed, tp, hf_config, explicit}; the same seed gives the same model.");
}
