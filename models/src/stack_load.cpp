// Loader of `scalescope.stack/1` files (docs/stack-profile.md) and the built-in stacks.
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "scalescope/models/stack_profile.hpp"
#include "scalescope/sim/data_files.hpp"
#include "stack_builtin.hpp"

namespace scalescope::models {

std::string_view to_string(StackPhase p) {
  static constexpr std::string_view kNames[] = {"layer_forward", "layer_backward", "embedding_forward",
                                                "embedding_backward", "head_forward", "head_backward", "optimizer"};
  return kNames[static_cast<int>(p)];
}

std::string_view to_string(RowKind k) {
  static constexpr std::string_view kNames[] = {"gemm", "attention", "memory", "fixed"};
  return kNames[static_cast<int>(k)];
}

namespace {

/// An expression from a JSON string or number.
Expr expr_at(const JsonCursor& c, const SymbolTable& table) {
  if (c.json().is_number()) {
    const double v = c.as_number();
    if (!std::isfinite(v)) c.fail("expected a finite number");
    return Expr::constant(v);
  }
  if (!c.json().is_string()) c.fail("expected an expression (a string such as \"2*T*H\") or a number, got " +
                                    JsonCursor::describe(c.json()));
  auto e = Expr::parse(c.as_string(), table, c.file(), c.path());
  return std::move(e).take_or_throw();
}

Expr optional_expr(const JsonCursor& c, std::string_view key, const SymbolTable& table, double dflt) {
  if (auto f = c.find(key)) return expr_at(*f, table);
  return Expr::constant(dflt);
}

/// [[name, expr], ...]: names are added to `table` in order (a var may use the ones before it).
std::vector<std::pair<int, Expr>> read_vars(const JsonCursor& c, SymbolTable& table) {
  std::vector<std::pair<int, Expr>> out;
  for (const auto& item : c.items()) {
    if (!item.is_array() || item.size() != 2) item.fail("expected a [name, expression] pair");
    const std::string name = item.at(std::size_t{0}).as_string();
    if (name.empty() || table.find(name) >= 0) {
      item.at(std::size_t{0}).fail("expected a new name (not empty, not a symbol or an earlier var), got \"" +
                                   name + "\"");
    }
    Expr e = expr_at(item.at(std::size_t{1}), table);  // parsed before the name exists: no self-reference
    out.emplace_back(table.add(name), std::move(e));
  }
  return out;
}

StackRow read_row(const JsonCursor& c, const SymbolTable& t) {
  c.expect_object();
  StackRow r;
  r.name = c.get_string("name");
  const std::string kind = c.at("kind").as_enum({"gemm", "attention", "memory", "fixed"});
  r.kind = kind == "gemm" ? RowKind::gemm : kind == "attention" ? RowKind::attention
         : kind == "memory" ? RowKind::memory : RowKind::fixed;
  if (auto w = c.find("when")) r.when = expr_at(*w, t);
  r.kernels = optional_expr(c, "kernels", t, 1.0);
  if (auto ts = c.find("time_s")) r.time_s = ts->as_nonnegative_number();
  r.selective_recompute = c.has("selective_recompute") && c.at("selective_recompute").as_bool();
  r.after_sync = c.has("after_sync") && c.at("after_sync").as_bool();
  switch (r.kind) {
    case RowKind::gemm:
      c.expect_keys({"name", "kind", "when", "kernels", "m", "n", "k", "batch", "dtype", "time_s",
                     "selective_recompute", "after_sync", "note"});
      r.m = expr_at(c.at("m"), t);
      r.n = expr_at(c.at("n"), t);
      r.k = expr_at(c.at("k"), t);
      r.batch = optional_expr(c, "batch", t, 1.0);
      if (auto d = c.find("dtype")) r.dtype = d->as_enum({"compute", "attention", "bf16", "fp16", "fp8", "tf32", "fp32"});
      break;
    case RowKind::attention:
      c.expect_keys({"name", "kind", "when", "kernels", "batch", "heads", "kv_heads", "head_dim", "seq", "window",
                     "causal", "pass", "backend", "packed", "dropout", "io", "time_s", "selective_recompute", "after_sync",
                     "note"});
      r.batch = expr_at(c.at("batch"), t);
      r.heads = expr_at(c.at("heads"), t);
      r.kv_heads = expr_at(c.at("kv_heads"), t);
      r.head_dim = expr_at(c.at("head_dim"), t);
      r.seq = expr_at(c.at("seq"), t);
      r.window = optional_expr(c, "window", t, 0.0);
      r.causal = !c.has("causal") || c.at("causal").as_bool();
      if (auto b = c.find("backend")) {
        r.backend = attention_backend_named(b->as_enum({"flash", "cudnn", "varlen"}));
        r.backend_named = true;
      }
      r.packed = optional_expr(c, "packed", t, 0.0);
      r.dropout = optional_expr(c, "dropout", t, 0.0);
      r.backward = c.at("pass").as_enum({"forward", "backward"}) == "backward";
      r.io = optional_expr(c, "io", t, 0.0);
      break;
    case RowKind::memory:
      c.expect_keys({"name", "kind", "when", "kernels", "bytes", "bandwidth_factor", "scaling", "time_s",
                     "selective_recompute", "after_sync", "group", "note"});
      r.bytes = expr_at(c.at("bytes"), t);
      if (auto g = c.find("group")) {
        const std::string name = g->as_enum({"ssd_forward", "ssd_backward", "gated_norm_forward", "gated_norm_backward"});
        for (int i = 0; i < kNumMambaGroups; ++i)
          if (to_string(static_cast<MambaGroup>(i)) == name) r.group = static_cast<MambaGroup>(i);
      }
      r.bandwidth_factor = c.has("bandwidth_factor") && c.at("bandwidth_factor").as_bool();
      if (auto s = c.find("scaling")) r.linear_in_bytes = s->as_enum({"sweep", "bytes"}) == "bytes";
      break;
    case RowKind::fixed:
      c.expect_keys({"name", "kind", "when", "kernels", "time_s", "after_sync", "note"});
      if (!r.time_s) c.fail("a fixed row needs time_s");
      break;
  }
  return r;
}

std::optional<double> measured(const std::optional<JsonCursor>& m, std::string_view key) {
  if (!m) return std::nullopt;
  if (auto f = m->find(key)) return f->as_nonnegative_number();
  return std::nullopt;
}

}  // namespace

Expected<StackProfile> stack_from_json(const Json& doc, const std::string& file) {
  return catch_errors([&]() -> StackProfile {
    JsonCursor root(doc, file);
    root.expect_object();
    root.expect_keys({"schema", "name", "description", "vars", "properties", "phases", "memory", "host", "trace",
                      "import"});
    if (root.get_string("schema") != "scalescope.stack/1") {
      root.at("schema").fail("expected \"scalescope.stack/1\"");
    }
    StackProfile s;
    s.name = root.get_string("name");
    s.description = root.get_string("description", "");
    s.source = file;
    for (const auto& n : stack_base_symbols()) s.table_.add(n);
    if (auto v = root.find("vars")) s.vars_ = read_vars(*v, s.table_);
    const SymbolTable& t = s.table_;

    s.residual_bytes = Expr::constant(2.0);
    s.fsdp2 = Expr::constant(0.0);
    s.ddp_grad_copies = Expr::constant(0.0);
    s.grad_tensors_per_layer = Expr::constant(0.0);
    s.moe_host_sync = Expr::parse("ep > 1", t, file, "$.properties.moe_host_sync").take_or_throw();
    if (auto pr = root.find("properties")) {
      pr->expect_keys({"residual_bytes", "fsdp2", "ddp_grad_copies", "grad_tensors_per_layer", "torch_pipelining",
                       "distributed_optimizer", "moe", "moe_host_sync", "fine_tuning", "fp8_fast_fprop", "hybrid", "memory_bandwidth_factor", "memory_bandwidth_factor_source",
                       "launch_floor", "kernel_gap_s", "applies"});
      if (auto f = pr->find("residual_bytes")) s.residual_bytes = expr_at(*f, t);
      if (auto f = pr->find("fsdp2")) s.fsdp2 = expr_at(*f, t);
      if (auto f = pr->find("ddp_grad_copies")) s.ddp_grad_copies = expr_at(*f, t);
      if (auto f = pr->find("grad_tensors_per_layer")) s.grad_tensors_per_layer = expr_at(*f, t);
      if (auto f = pr->find("torch_pipelining")) s.torch_pipelining = f->as_bool();
      if (auto f = pr->find("distributed_optimizer")) s.distributed_optimizer = f->as_bool();
      if (auto f = pr->find("moe")) s.moe = f->as_bool();
      if (auto f = pr->find("moe_host_sync")) s.moe_host_sync = expr_at(*f, t);
      if (auto f = pr->find("fine_tuning")) s.fine_tuning = f->as_bool();
      if (auto f = pr->find("fp8_fast_fprop")) s.fp8_fast_fprop = f->as_bool();
      if (auto f = pr->find("hybrid")) s.hybrid = f->as_bool();
      if (auto f = pr->find("memory_bandwidth_factor")) s.memory_bandwidth_factor = f->as_positive_number();
      s.memory_bandwidth_factor_source = pr->get_string("memory_bandwidth_factor_source", "");
      if (auto f = pr->find("launch_floor")) s.launch_floor = f->as_bool();
      if (auto f = pr->find("kernel_gap_s")) s.kernel_gap_s = f->as_nonnegative_number();
      if (auto f = pr->find("applies")) s.applies = expr_at(*f, t);
    }

    const JsonCursor phases = root.at("phases");
    phases.expect_keys({"layer_forward", "layer_backward", "embedding_forward", "embedding_backward", "head_forward",
                        "head_backward", "optimizer"});
    for (int i = 0; i < kNumStackPhases; ++i) {
      if (auto ph = phases.find(to_string(static_cast<StackPhase>(i)))) {
        for (const auto& row : ph->items()) {
          s.phases[static_cast<std::size_t>(i)].push_back(read_row(row, t));
          if (s.phases[static_cast<std::size_t>(i)].back().after_sync && i != static_cast<int>(StackPhase::layer_forward))
            row.at("after_sync").fail("only layer_forward rows are issued after the host's synchronisation");
        }
      }
    }

    s.memory_table_ = s.table_;
    for (const auto& n : stack_memory_extra_symbols()) s.memory_table_.add(n);
    const JsonCursor mem = root.at("memory");
    mem.expect_keys({"vars", "weights", "grads", "optimizer", "activations_per_layer", "embedding_logits",
                     "recompute_workspace", "zero3_gather", "framework_copies", "optimizer_peak", "scores_per_layer",
                     "scores_transient", "scores_persistent", "measured", "note"});
    if (auto v = mem.find("vars")) s.memory_vars_ = read_vars(*v, s.memory_table_);
    const SymbolTable& mt = s.memory_table_;
    StackMemory& m = s.memory;
    m.weights = expr_at(mem.at("weights"), mt);
    m.grads = expr_at(mem.at("grads"), mt);
    m.optimizer = expr_at(mem.at("optimizer"), mt);
    m.activations_per_layer = expr_at(mem.at("activations_per_layer"), mt);
    m.embedding_logits = optional_expr(mem, "embedding_logits", mt, 0.0);
    m.recompute_workspace = optional_expr(mem, "recompute_workspace", mt, 0.0);
    m.zero3_gather = optional_expr(mem, "zero3_gather", mt, 0.0);
    m.framework_copies = optional_expr(mem, "framework_copies", mt, 0.0);
    m.optimizer_peak = optional_expr(mem, "optimizer_peak", mt, 0.0);
    m.scores_per_layer = optional_expr(mem, "scores_per_layer", mt, 0.0);
    m.scores_transient = optional_expr(mem, "scores_transient", mt, 0.0);
    m.scores_persistent = optional_expr(mem, "scores_persistent", mt, 0.0);
    const auto meas = mem.find("measured");
    if (meas)
      meas->expect_keys({"states_bytes", "activations_per_layer_bytes", "rest_bytes", "optimizer_peak_bytes",
                         "score_activations_per_layer_bytes", "score_rest_bytes", "score_persistent_bytes", "note"});
    m.measured_states = measured(meas, "states_bytes");
    m.measured_activations_per_layer = measured(meas, "activations_per_layer_bytes");
    m.measured_rest = measured(meas, "rest_bytes");
    m.measured_optimizer_peak = measured(meas, "optimizer_peak_bytes");
    m.measured_score_activations_per_layer = measured(meas, "score_activations_per_layer_bytes");
    m.measured_score_rest = measured(meas, "score_rest_bytes");
    m.measured_score_persistent = measured(meas, "score_persistent_bytes");
    if (m.measured_score_activations_per_layer &&
        *m.measured_score_activations_per_layer > m.measured_activations_per_layer.value_or(0.0))
      meas->at("score_activations_per_layer_bytes")
          .fail("expected at most activations_per_layer_bytes (the score-sized part of the activations)");

    if (auto h = root.find("host"); h && h->has("per_kernel_s")) {
      h->expect_keys({"per_kernel_s", "source", "method", "note"});
      s.host_per_kernel_s = h->at("per_kernel_s").as_nonnegative_number();
      s.host_source = h->get_string("source", file);
    } else if (h) {
      h->expect_keys({"per_layer_microbatch_s", "per_edge_microbatch_s", "per_step_s", "process_samples", "forward_share",
                      "after_sync_share", "source", "method", "note"});
      FrameworkHostCost host;
      host.source = h->get_string("source", file);
      host.framework = s.name;
      const JsonCursor per = h->at("per_layer_microbatch_s");
      per.expect_keys({"module", "tensor_parallel"});
      host.module = Seconds(per.at("module").as_nonnegative_number());
      host.tensor_parallel = Seconds(per.has("tensor_parallel") ? per.at("tensor_parallel").as_nonnegative_number()
                                                                : host.module.value);
      read_host_extras(*h, host);
      s.host_source = host.source;
      s.host = host;
    }

    if (auto tr = root.find("trace")) {
      tr->expect_keys({"file", "gpu", "software", "step_time_s", "symbols", "note"});
      StackTrace trace;
      trace.file = tr->get_string("file", "");
      trace.gpu = tr->get_string("gpu", "");
      trace.software = tr->get_string("software", "");
      trace.step_time_s = tr->get_number("step_time_s", 0.0);
      s.trace_values_.assign(s.table_.size(), 0.0);
      // A symbol added after the stack was imported takes its neutral value (cp: no context parallelism; no
      // expert parallelism, balanced routing).
      for (const char* one : {"cp", "ep", "etp", "edp", "imb"}) s.trace_values_[static_cast<std::size_t>(s.table_.find(one))] = 1.0;
      const auto& base = stack_base_symbols();
      const auto& extra = stack_memory_extra_symbols();
      for (const auto& [name, value] : tr->at("symbols").members()) {
        const std::string& key = name;  // clang 14 (preset asan) cannot capture a structured binding
        const auto in = [&](const std::vector<std::string>& names) {
          return std::find(names.begin(), names.end(), key) != names.end();
        };
        if (!in(base) && !in(extra)) value.fail("expected a model, plan or memory symbol name, got \"" + name + "\"");
        trace.symbols.emplace_back(name, value.as_number());
        if (in(base)) s.trace_values_[static_cast<std::size_t>(s.table_.find(name))] = value.as_number();
      }
      // Nor packed documents (attention over the whole sequence).
      for (const char* whole : {"doc", "seq_doc"}) {
        auto& span = s.trace_values_[static_cast<std::size_t>(s.table_.find(whole))];
        if (span == 0.0) span = s.trace_values_[static_cast<std::size_t>(s.table_.find("s"))];
      }
      s.eval_vars(s.trace_values_, s.vars_);
      if (m.measured_states || m.measured_activations_per_layer || m.measured_rest || m.measured_optimizer_peak) {
        s.trace_memory_values_ = s.trace_values_;
        s.trace_memory_values_.resize(s.memory_table_.size(), 0.0);
        for (const auto& [name, value] : trace.symbols) {
          if (std::find(extra.begin(), extra.end(), name) != extra.end())
            s.trace_memory_values_[static_cast<std::size_t>(s.memory_table_.find(name))] = value;
        }
        auto& trained = s.trace_memory_values_[static_cast<std::size_t>(s.memory_table_.find("P_train"))];
        if (trained == 0.0) trained = s.trace_memory_values_[static_cast<std::size_t>(s.memory_table_.find("P"))];
        s.eval_vars(s.trace_memory_values_, s.memory_vars_);
      }
      s.trace = std::move(trace);
    }
    for (const auto& ph : s.phases) {
      for (const auto& r : ph) {
        if (r.time_s && r.kind != RowKind::fixed && !s.trace) {
          root.at("phases").fail("row '" + r.name + "' has time_s (measured) but the stack has no `trace` section "
                                 "giving the symbols it was measured at");
        }
      }
    }
    return s;
  });
}

std::vector<std::string> builtin_stack_names() {
  std::vector<std::string> out;
  for (const auto& b : detail::builtin_stacks()) out.emplace_back(b.name);
  return out;
}

namespace {

/// A built-in stack, parsed and loaded once per process: they are compiled-in constants, and every simulate,
/// plan and trace import (the trace-import fuzz target: once per input) would otherwise lex and load the same
/// text again. Built on first use, then only read (a function-local static: thread-safe).
struct ParsedBuiltin {
  std::string_view name;
  Expected<Json> doc;
  Expected<std::shared_ptr<const StackProfile>> stack;
};

const std::vector<ParsedBuiltin>& parsed_builtins() {
  static const std::vector<ParsedBuiltin> all = [] {
    std::vector<ParsedBuiltin> v;
    for (const auto& b : detail::builtin_stacks()) {
      const std::string src = "<builtin:" + std::string(b.name) + ">";
      auto doc = parse_json_text(b.json, src);
      auto load = [&]() -> Expected<std::shared_ptr<const StackProfile>> {
        if (!doc) return doc.error();
        auto s = stack_from_json(*doc, src);
        if (!s) return s.error();
        return std::make_shared<const StackProfile>(std::move(s).value());
      };
      auto stack = load();
      v.push_back({b.name, std::move(doc), std::move(stack)});
    }
    return v;
  }();
  return all;
}

}  // namespace

Expected<Json> builtin_stack_document(std::string_view name) {
  if (name == "megatron") name = "fused";
  for (const auto& b : parsed_builtins())
    if (b.name == name) return b.doc;
  std::string known;
  for (const auto& n : builtin_stack_names()) known += (known.empty() ? "" : ", ") + n;
  return input_error("--base", "", "expected a built-in stack (" + known + "), got '" + std::string(name) + "'");
}

namespace {

Expected<std::shared_ptr<const StackProfile>> load_builtin(std::string_view name) {
  for (const auto& b : parsed_builtins())
    if (b.name == name) return b.stack;
  return input_error("--framework", "", "no built-in stack '" + std::string(name) + "'");
}

}  // namespace

Expected<std::shared_ptr<const StackProfile>> load_stack(std::string_view name) {
  if (name == "megatron") name = "fused";
  if (name == "pytorch-eager-autocast") name = "pytorch-eager";
  for (const auto& b : detail::builtin_stacks())
    if (b.name == name) return load_builtin(name);
  if (!looks_like_path(name)) {
    std::string known;
    for (const auto& n : builtin_stack_names()) known += (known.empty() ? "" : ", ") + n;
    return input_error("--framework", "",
                       "expected a built-in stack (" + known + ", megatron = fused) or a stack profile file "
                       "(scalescope.stack/1, e.g. written by `scalescope import torch-trace`), got '" +
                           std::string(name) + "'");
  }
  auto doc = read_json_file(std::string(name));
  if (!doc) return doc.error();
  auto s = stack_from_json(*doc, std::string(name));
  if (!s) return s.error();
  return std::make_shared<const StackProfile>(std::move(s).value());
}

Expected<std::vector<std::shared_ptr<const StackProfile>>> load_stacks(std::string_view list) {
  std::vector<std::shared_ptr<const StackProfile>> out;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t comma = list.find(',', start);
    const std::string_view item = list.substr(start, comma == std::string_view::npos ? list.npos : comma - start);
    if (item.empty()) return input_error("--framework", "", "expected a stack name or file between commas");
    auto s = load_stack(item);
    if (!s) return s.error();
    out.push_back(std::move(s).value());
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

Expected<std::shared_ptr<const StackProfile>> select_stack(
    const std::vector<std::shared_ptr<const StackProfile>>& stacks, const ModelSpec& spec, const Plan& plan) {
  // The first stack that applies; when it is an imported one (it has a trace), the imported stack that applies and
  // was traced nearest the plan's tokens per micro-batch (|log(T / T_trace)|, ties to the earlier): a trace moved
  // far from its shape carries the calibration's size dependence, which grew faster than two programs' training
  // kernels did (validation/session24), so several traces of one program each price the plans near them.
  const std::shared_ptr<const StackProfile>* first = nullptr;
  const std::shared_ptr<const StackProfile>* nearest = nullptr;
  double best = 0.0;
  const double tokens = static_cast<double>(plan.mbs) * spec.seq_len;
  for (const auto& s : stacks) {
    if (!s->applies_to(spec, plan)) continue;
    const double traced = s->traced_tokens();
    if (!first) {
      first = &s;
      if (!(traced > 0.0) || !(tokens > 0.0)) return s;
    }
    if (!(traced > 0.0)) continue;
    const double d = std::fabs(std::log(tokens / traced));
    if (!nearest || d < best) {
      nearest = &s;
      best = d;
    }
  }
  if (nearest || first) return nearest ? *nearest : *first;
  std::string names;
  for (const auto& s : stacks) names += (names.empty() ? "" : ", ") + s->source;
  return input_error("--framework", "", "none of the stacks (" + names + ") applies to the plan " + to_string(plan) +
                                            " (each stack's properties.applies)");
}

std::shared_ptr<const StackProfile> default_stack() {
  static const std::shared_ptr<const StackProfile> fused = [] {
    auto s = load_builtin("fused");
    assert(s && "the built-in fused stack must load");
    return std::move(s).value();
  }();
  return fused;
}

}  // namespace scalescope::models
