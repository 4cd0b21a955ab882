// Megatron-LM command-line flags -> Plan (what is read and checked: megatron_flags.hpp).
#include "scalescope/models/megatron_flags.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>

#include "scalescope/models/layer_costs.hpp"

namespace scalescope::models {

namespace {

const std::string kSource = "--plan-from-megatron";

[[noreturn]] void reject(const std::string& flag, const std::string& message) {
  throw ErrorException(input_error(kSource, flag, message));
}

/// Flags that take no value (store_true in Megatron-LM); any other flag takes the next token when it
/// does not start with "--".
const std::set<std::string, std::less<>>& switches() {
  static const std::set<std::string, std::less<>> s = {
      "--sequence-parallel", "--use-distributed-optimizer", "--overlap-grad-reduce", "--overlap-param-gather",
      "--tp-comm-overlap", "--bf16", "--fp16", "--fp8-param-gather", "--accumulate-allreduce-grads-in-fp32",
      "--swiglu", "--untie-embeddings-and-output-weights", "--group-query-attention", "--recompute-activations",
      "--use-torch-fsdp2", "--use-megatron-fsdp", "--use-flash-attn", "--disable-bias-linear",
      "--overlap-param-gather-with-optimizer-step", "--no-gradient-accumulation-fusion", "--use-mcore-models",
      "--no-masked-softmax-fusion", "--no-bias-gelu-fusion", "--no-bias-dropout-fusion", "--use-rotary-position-embeddings",
      "--add-qkv-bias", "--no-position-embedding", "--manual-gc", "--no-async-tensor-model-parallel-allreduce",
      "--defer-embedding-wgrad-compute", "--cross-entropy-loss-fusion", "--no-persist-layer-norm", "--use-checkpoint-args",
      "--mock-data", "--bias-swiglu-fusion", "--no-create-attention-mask-in-dataloader",
      "--overlap-moe-expert-parallel-comm", "--moe-pad-expert-input-to-capacity", "--moe-grouped-gemm",
      "--moe-permute-fusion", "--moe-shared-expert-overlap", "--moe-router-pre-softmax", "--multi-latent-attention",
      "--qk-layernorm", "--moe-router-padding-for-fp8", "--delay-wgrad-compute"};
  return s;
}

/// The flags read here (anything else is listed as ignored).
const std::set<std::string, std::less<>>& read_flags() {
  static const std::set<std::string, std::less<>> s = {
      "--tensor-model-parallel-size", "--pipeline-model-parallel-size", "--context-parallel-size", "--cp-comm-type",
      "--virtual-pipeline-model-parallel-size", "--num-layers-per-virtual-pipeline-stage", "--micro-batch-size",
      "--global-batch-size", "--sequence-parallel", "--use-distributed-optimizer", "--use-torch-fsdp2",
      "--use-megatron-fsdp", "--overlap-grad-reduce", "--overlap-param-gather", "--tp-comm-overlap", "--ddp-bucket-size",
      "--recompute-granularity", "--recompute-method", "--recompute-num-layers", "--recompute-activations", "--bf16",
      "--fp16", "--fp8-format", "--fp8-recipe", "--fp8-param-gather", "--accumulate-allreduce-grads-in-fp32",
      "--decoder-first-pipeline-num-layers", "--decoder-last-pipeline-num-layers", "--pipeline-model-parallel-layout",
      "--nnodes", "--nproc-per-node", "--nproc_per_node", "--num-layers", "--hidden-size", "--num-attention-heads",
      "--ffn-hidden-size", "--seq-length", "--num-query-groups", "--group-query-attention", "--swiglu",
      "--normalization", "--untie-embeddings-and-output-weights", "--num-experts", "--moe-router-topk",
      "--moe-ffn-hidden-size", "--moe-shared-expert-intermediate-size", "--expert-model-parallel-size",
      "--expert-tensor-parallel-size", "--moe-token-dispatcher-type", "--moe-expert-capacity-factor",
      "--moe-pad-expert-input-to-capacity", "--overlap-moe-expert-parallel-comm", "--attention-dropout",
      "--hidden-dropout", "--cross-entropy-loss-fusion", "--cross-entropy-fusion-impl"};
  return s;
}

/// The flags: `in` itself, or the file it names (one word naming something that exists). A file is read under
/// read_input_file's rules: a regular file (a FIFO, device or folder is refused, without blocking) of at most
/// 1 MiB (a launch script's command line is a few KiB).
std::string read_text(std::string_view in) {
  const std::filesystem::path p(in);
  std::error_code ec;
  if (in.find_first_of(" \t\r\n") == std::string_view::npos && !in.empty() &&
      std::filesystem::symlink_status(p, ec).type() != std::filesystem::file_type::not_found && !ec) {
    auto text = read_input_file(p, std::uint64_t{1} << 20, "Megatron flags file");
    if (!text) throw ErrorException(text.error());
    return std::move(text).value();
  }
  return std::string(in);
}

/// Shell-like words: quotes group, backslash-newline joins lines, '#' starts a comment.
std::vector<std::string> words(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  bool in_word = false;
  char quote = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quote) {
      if (c == quote) quote = 0;
      else cur += c;
      continue;
    }
    if (c == '\\' && i + 1 < text.size() && (text[i + 1] == '\n' || text[i + 1] == '\r')) {
      ++i;
      continue;
    }
    if (c == '#' && !in_word) {
      while (i < text.size() && text[i] != '\n') ++i;
      continue;
    }
    if (c == '"' || c == '\'') {
      quote = c;
      in_word = true;
    } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      if (in_word) out.push_back(cur);
      cur.clear();
      in_word = false;
    } else {
      cur += c;
      in_word = true;
    }
  }
  if (quote) reject("", "unterminated quote");
  if (in_word) out.push_back(cur);
  return out;
}

struct Flags {
  std::map<std::string, std::string, std::less<>> values;  ///< flag -> value ("" for switches)
  std::vector<std::string> ignored;

  bool has(std::string_view f) const { return values.count(f) != 0; }
  std::optional<int> integer(std::string_view f, int lo = 1) const {
    auto it = values.find(f);
    if (it == values.end()) return std::nullopt;
    int v = 0;
    const std::string& s = it->second;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p != s.data() + s.size() || v < lo) {
      reject(std::string(f), "expected an integer >= " + std::to_string(lo) + ", got '" + s + "'");
    }
    return v;
  }
  std::optional<std::string> text(std::string_view f) const {
    auto it = values.find(f);
    return it == values.end() ? std::nullopt : std::optional<std::string>(it->second);
  }
};

Flags parse(const std::vector<std::string>& w) {
  Flags f;
  for (std::size_t i = 0; i < w.size(); ++i) {
    if (w[i].rfind("--", 0) != 0) {
      f.ignored.push_back(w[i]);  // the launcher and script, stray values
      continue;
    }
    std::string name = w[i], value;
    bool has_value = false;
    if (const auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_value = true;
    } else if (!switches().count(name) && i + 1 < w.size() && w[i + 1].rfind("--", 0) != 0) {
      value = w[++i];
      has_value = true;
    }
    if (!read_flags().count(name)) {
      f.ignored.push_back(has_value ? name + " " + value : name);
      continue;
    }
    if (!f.values.emplace(name, value).second) reject(name, "given more than once");
  }
  return f;
}

std::string fmt_number(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", v);
  return b;
}

/// --attention-dropout / --hidden-dropout against the model's dropout: a value given that differs is a contradiction;
/// an absent flag, where the flags describe the model (--num-layers), means Megatron-LM's default 0.1, noted when the
/// model has another value (the model's is priced).
void check_dropout(const Flags& f, const ModelSpec& m, std::vector<std::string>& notes) {
  for (const auto& [flag, field, model_value] :
       {std::tuple{"--attention-dropout", "attention_dropout", m.attention_dropout},
        std::tuple{"--hidden-dropout", "hidden_dropout", m.hidden_dropout}}) {
    const auto given = f.text(flag);
    if (!given) {
      if (f.has("--num-layers") && std::fabs(model_value - 0.1) > 1e-12)
        notes.push_back(std::string(flag) + " absent: Megatron-LM trains with its default 0.1, the model (" + m.name +
                        ") has " + field + "=" + fmt_number(model_value) + ", which is priced (give " + flag +
                        " or the model key to make them agree)");
      continue;
    }
    char* end = nullptr;
    const double v = std::strtod(given->c_str(), &end);
    if (end == given->c_str() || *end != '\0' || !(v >= 0.0 && v < 1.0))
      reject(flag, "expected a dropout probability in [0, 1), got '" + *given + "'");
    if (std::fabs(v - model_value) > 1e-12)
      reject(flag, *given + " contradicts the model's " + field + "=" + fmt_number(model_value) + " (" + m.name +
                       "): set " + field + " in the model");
  }
}

void check_model(const Flags& f, const ModelSpec& m) {
  auto same = [&](const char* flag, long long model_value, const char* field) {
    if (auto v = f.integer(flag); v && *v != model_value) {
      reject(flag, std::to_string(*v) + " contradicts the model's " + field + "=" + std::to_string(model_value) +
                       " (" + m.name + ")");
    }
  };
  same("--num-layers", m.layers, "layers");
  same("--hidden-size", m.hidden, "hidden");
  same("--num-attention-heads", m.heads, "heads");
  same("--ffn-hidden-size", m.ffn_hidden, "ffn_hidden");
  if (f.has("--group-query-attention")) same("--num-query-groups", m.kv_heads, "kv_heads");
  if (f.has("--num-experts") && !m.is_moe()) {
    reject("--num-experts", "given, but the model (" + m.name + ") has no experts: describe the MoE model with "
                            "experts, top_k and moe_ffn_hidden");
  }
  same("--num-experts", m.moe.experts, "experts");
  same("--moe-router-topk", m.moe.top_k, "top_k");
  same("--moe-ffn-hidden-size", m.moe.ffn_hidden, "moe_ffn_hidden");
  same("--moe-shared-expert-intermediate-size", m.moe.shared_width(), "shared_ffn_hidden");
  // Switches are absent by default: compared only when the flags describe the model (--num-layers given).
  if (!f.has("--num-layers")) return;
  if (f.has("--swiglu") != (m.ffn == FfnKind::swiglu)) {
    reject("--swiglu", std::string(f.has("--swiglu") ? "given" : "missing") + ", but the model's ffn is " +
                           std::string(to_string(m.ffn)) + " (" + m.name + ")");
  }
  if (auto n = f.text("--normalization")) {
    const bool rms = *n == "RMSNorm";
    if (rms != (m.norm == NormKind::rmsnorm)) {
      reject("--normalization", *n + " contradicts the model's norm=" + std::string(to_string(m.norm)));
    }
  }
  if (f.has("--untie-embeddings-and-output-weights") == m.tied_embeddings) {
    reject("--untie-embeddings-and-output-weights",
           std::string(m.tied_embeddings ? "given, but the model ties" : "missing, but the model unties") +
               " its embedding and output weights (" + m.name + ")");
  }
}

void read_precision(const Flags& f, Plan& p) {
  if (f.has("--bf16") && f.has("--fp16")) reject("--fp16", "--fp16 and --bf16 both given");
  if (!f.has("--bf16") && !f.has("--fp16")) {
    reject("--bf16", "neither --bf16 nor --fp16: fp32 training is not modelled");
  }
  if (f.has("--fp16")) {
    p.precision = f.has("--accumulate-allreduce-grads-in-fp32") ? Precision::mixed : Precision::fp16;
  }
  if (auto fmt = f.text("--fp8-format")) {
    if (*fmt != "e4m3" && *fmt != "hybrid") reject("--fp8-format", "expected e4m3 or hybrid, got '" + *fmt + "'");
    if (f.has("--fp16")) reject("--fp8-format", "scalescope models FP8 with bf16 (--bf16), got --fp16");
    p.precision = Precision::fp8;
  }
  if (auto r = f.text("--fp8-recipe")) {
    if (!p.fp8()) reject("--fp8-recipe", "needs --fp8-format");
    if (*r == "delayed") p.fp8_recipe = Fp8Recipe::delayed;
    else if (*r == "tensorwise") p.fp8_recipe = Fp8Recipe::tensorwise;
    else if (*r == "blockwise") p.fp8_recipe = Fp8Recipe::blockwise;
    else if (*r == "mxfp8") p.fp8_recipe = Fp8Recipe::mxfp8;
    else reject("--fp8-recipe", "expected delayed, tensorwise, blockwise or mxfp8, got '" + *r + "'");
  }
  p.fp8_params = f.has("--fp8-param-gather");
  // The loss's kernels: Megatron-Core's unfused cross entropy unless --cross-entropy-loss-fusion, then the
  // implementation --cross-entropy-fusion-impl names (Megatron's default: native).
  const std::optional<std::string> impl = f.text("--cross-entropy-fusion-impl");
  if (impl && *impl != "native" && *impl != "te")
    reject("--cross-entropy-fusion-impl", "expected native or te, got '" + *impl + "'");
  if (f.has("--cross-entropy-loss-fusion"))
    p.cross_entropy_fusion = impl == "te" ? CrossEntropyFusion::te : CrossEntropyFusion::native;
}

void read_recompute(const Flags& f, const ModelSpec& m, Plan& p, std::vector<std::string>& notes) {
  if (f.has("--recompute-activations")) p.recompute = Recompute::selective;
  if (auto g = f.text("--recompute-granularity")) {
    if (*g == "full") p.recompute = Recompute::full;
    else if (*g == "selective") p.recompute = Recompute::selective;
    else reject("--recompute-granularity", "expected full or selective, got '" + *g + "'");
  }
  if (p.recompute == Recompute::full) {
    const int per_chunk = m.layers / std::max(1, p.pp * p.vpp);
    const int n = f.integer("--recompute-num-layers").value_or(per_chunk);
    const std::string method = f.text("--recompute-method").value_or("uniform");
    if (method == "block" && n < per_chunk) {
      notes.push_back("--recompute-method block --recompute-num-layers " + std::to_string(n) + " recomputes " +
                      std::to_string(n) + " of the " + std::to_string(per_chunk) +
                      " layers of a model chunk; modelled as recompute=full (every layer): predicted too slow");
    }
  }
}

/// Expert parallelism and the MoE dispatcher (MoE models only; validate() checks the layout).
void read_experts(const Flags& f, const ModelSpec& m, Plan& p, std::vector<std::string>& notes) {
  p.ep = f.integer("--expert-model-parallel-size").value_or(1);
  // Megatron-Core: the expert TP size defaults to the TP size.
  p.etp = f.integer("--expert-tensor-parallel-size").value_or(m.is_moe() ? p.tp : 1);
  if (auto d = f.text("--moe-token-dispatcher-type")) {
    if (*d == "alltoall" || *d == "alltoall_seq") p.moe_dispatcher = MoeDispatcher::alltoall;
    else if (*d == "allgather") p.moe_dispatcher = MoeDispatcher::allgather;
    else if (*d == "flex") p.moe_dispatcher = MoeDispatcher::flex;
    else {
      reject("--moe-token-dispatcher-type", "expected alltoall, allgather or flex, got '" + *d + "'");
    }
  }
  if (auto c = f.text("--moe-expert-capacity-factor")) {
    double cf = 0.0;
    auto [ptr, ec] = std::from_chars(c->data(), c->data() + c->size(), cf);
    if (ec != std::errc() || ptr != c->data() + c->size() || !(cf >= 1.0) || cf > 1000.0)
      reject("--moe-expert-capacity-factor", "expected a factor in [1, 1000], got '" + *c + "'");
    // Padded to capacity, every expert computes capacity tokens; dropless below it, the busiest expert at most.
    if (f.has("--moe-pad-expert-input-to-capacity")) p.moe_imbalance = cf;
    else notes.push_back("--moe-expert-capacity-factor " + *c + " without padding: the busiest expert is priced at "
                         "moe_imbalance (default 1.0), at most the factor");
  }
  p.moe_a2a_overlap = f.has("--overlap-moe-expert-parallel-comm");
}

}  // namespace

std::string megatron_flag_of(std::string_view key) {
  static const std::map<std::string, std::string, std::less<>> flags = {
      {"tp", "--tensor-model-parallel-size"}, {"pp", "--pipeline-model-parallel-size"},
      {"cp", "--context-parallel-size"}, {"cp_comm", "--cp-comm-type"},
      {"vpp", "--virtual-pipeline-model-parallel-size"}, {"schedule", "--virtual-pipeline-model-parallel-size"},
      {"mbs", "--micro-batch-size"}, {"gbs", "--global-batch-size"}, {"sp", "--sequence-parallel"},
      {"zero", "--use-distributed-optimizer"}, {"overlap_grad_reduce", "--overlap-grad-reduce"},
      {"overlap_param_gather", "--overlap-param-gather"}, {"tp_comm_overlap", "--tp-comm-overlap"},
      {"bucket_MB", "--ddp-bucket-size"}, {"recompute", "--recompute-granularity"}, {"precision", "--bf16"},
      {"fp8_recipe", "--fp8-recipe"}, {"fp8_params", "--fp8-param-gather"},
      {"first_stage_layers", "--decoder-first-pipeline-num-layers"},
      {"last_stage_layers", "--decoder-last-pipeline-num-layers"}, {"pp_layout", "--pipeline-model-parallel-layout"},
      {"seq", "--seq-length"}, {"ep", "--expert-model-parallel-size"}, {"etp", "--expert-tensor-parallel-size"},
      {"moe_dispatcher", "--moe-token-dispatcher-type"}, {"moe_imbalance", "--moe-expert-capacity-factor"},
      {"moe_a2a_overlap", "--overlap-moe-expert-parallel-comm"},
      {"dp", "--nnodes"}};
  auto it = flags.find(key);
  return it == flags.end() ? std::string() : it->second;
}

Expected<MegatronImport> plan_from_megatron(std::string_view in, const ModelSpec& m, int world_gpus) {
  return catch_errors([&] {
    const Flags f = parse(words(read_text(in)));
    check_model(f, m);
    MegatronImport out;
    check_dropout(f, m, out.notes);
    out.ignored = f.ignored;
    Plan& p = out.plan;
    p.tp = f.integer("--tensor-model-parallel-size").value_or(1);
    p.pp = f.integer("--pipeline-model-parallel-size").value_or(1);
    p.cp = f.integer("--context-parallel-size").value_or(1);
    if (auto c = f.text("--cp-comm-type")) {
      if (*c == "p2p") p.cp_comm = CpComm::p2p;
      else if (*c == "a2a") p.cp_comm = CpComm::a2a;
      else if (*c == "allgather") p.cp_comm = CpComm::allgather;
      else reject("--cp-comm-type", "expected p2p, a2a or allgather (a2a+p2p is not modelled), got '" + *c + "'");
    }
    if (auto v = f.integer("--virtual-pipeline-model-parallel-size")) p.vpp = *v;
    if (auto n = f.integer("--num-layers-per-virtual-pipeline-stage")) {
      if (f.has("--virtual-pipeline-model-parallel-size")) {
        reject("--num-layers-per-virtual-pipeline-stage", "given with --virtual-pipeline-model-parallel-size");
      }
      if (m.layers % (p.pp * *n) != 0) {
        reject("--num-layers-per-virtual-pipeline-stage",
               std::to_string(*n) + " layers per virtual stage do not divide the " + std::to_string(m.layers / p.pp) +
                   " layers of a pipeline stage");
      }
      p.vpp = m.layers / (p.pp * *n);
    }
    if (p.vpp > 1) p.schedule = Schedule::interleaved;
    int world = world_gpus;
    if (auto nodes = f.integer("--nnodes")) {
      const auto per = f.integer("--nproc-per-node") ? f.integer("--nproc-per-node") : f.integer("--nproc_per_node");
      if (!per) reject("--nnodes", "needs --nproc-per-node to give the world size");
      world = *nodes * *per;
    }
    if (world <= 0) reject("--nnodes", "the world size is unknown: give --nnodes and --nproc-per-node, or --gpus");
    if (world % (p.tp * p.cp * p.pp) != 0) {
      reject(f.has("--nnodes") ? "--nnodes" : "--tensor-model-parallel-size",
             "the world size " + std::to_string(world) + " is not a multiple of tp*cp*pp=" + std::to_string(p.tp * p.cp * p.pp));
    }
    p.dp = world / (p.tp * p.cp * p.pp);
    out.world = world;
    p.mbs = f.integer("--micro-batch-size").value_or(1);
    if (auto s = f.integer("--seq-length"); s && *s != m.seq_len) p.seq = *s;  // the plan's own sequence length
    p.gbs = f.integer("--global-batch-size").value_or(p.mbs * p.dp);
    p.sp = f.has("--sequence-parallel");
    if (f.has("--use-distributed-optimizer")) p.zero = 1;
    if (f.has("--use-torch-fsdp2") || f.has("--use-megatron-fsdp")) p.zero = 3;
    read_precision(f, p);
    p.grad_reduce_in_fp32 = true;  // Megatron-LM accumulates and reduces bf16 gradients in fp32
    p.overlap = f.has("--overlap-grad-reduce");
    p.overlap_param_gather = f.has("--overlap-param-gather");
    p.tp_comm_overlap = f.has("--tp-comm-overlap");
    const double grad = grad_bytes_per_element(p);
    const double elements = f.integer("--ddp-bucket-size")
                                ? static_cast<double>(*f.integer("--ddp-bucket-size"))
                                : (p.overlap ? std::max(40e6, 1e6 * p.dp * p.cp) : 1e12);  // no overlap: one bucket
    p.bucket_MB = elements * grad / (1024.0 * 1024.0);
    read_recompute(f, m, p, out.notes);
    read_experts(f, m, p, out.notes);
    p.first_stage_layers = f.integer("--decoder-first-pipeline-num-layers").value_or(0);
    p.last_stage_layers = f.integer("--decoder-last-pipeline-num-layers").value_or(0);
    if (auto l = f.text("--pipeline-model-parallel-layout")) {
      p.pp_layout = *l;
      p.pp_layout.erase(std::remove(p.pp_layout.begin(), p.pp_layout.end(), ','), p.pp_layout.end());
    }
    if (auto ok = validate(p, m, world); !ok) {  // name the flag behind the plan key
      const Error& e = ok.error();
      const std::string flag = megatron_flag_of(e.path);
      reject(flag.empty() ? e.path : flag, e.message);
    }
    return out;
  });
}

}  // namespace scalescope::models
