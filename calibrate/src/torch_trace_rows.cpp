// Rows of an imported stack (torch_trace.hpp, step 4): each kernel's cost class and the expression its size
// scales by, merged over like kernels and, for the layers, averaged over the L layers.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <unordered_map>

#include "scalescope/models/expr.hpp"
#include "scalescope/models/stack_profile.hpp"
#include "torch_trace_impl.hpp"

namespace scalescope::calib::trace {

namespace {

using models::Expr;
using models::SymbolTable;

enum class Role { none, attn_in, attn_out, mlp_in, mlp_out, head };

bool has(const std::string& s, std::string_view p) { return s.find(p) != std::string::npos; }

double dtype_bytes(const std::string& t) {
  if (t == "float" || t == "int" || t == "unsigned int") return 4.0;
  if (t == "c10::BFloat16" || t == "c10::Half" || t == "short") return 2.0;
  if (t == "double" || t == "long int" || t == "long") return 8.0;
  if (t == "bool" || t == "unsigned char" || t == "signed char" || has(t, "Float8")) return 1.0;
  return 4.0;  // tensor lists and the unknown
}

std::string gemm_dtype(const std::string& op, const OpInput& a) {
  if (has(op, "_scaled_mm") || has(a.type, "Float8")) return "fp8";
  if (a.type == "c10::BFloat16") return "bf16";
  if (a.type == "c10::Half") return "fp16";
  if (a.type == "float") return "fp32";
  return "compute";
}

/// "aten::mul: vectorized_elementwise_kernel" from the op and a kernel's C++ name.
std::string row_name(const std::string& op, const std::string& kernel) {
  std::string k = kernel;
  if (k.rfind("void ", 0) == 0) k = k.substr(5);
  const std::size_t cut = k.find_first_of("(<");
  if (cut != std::string::npos) k = k.substr(0, cut);
  const std::size_t ns = k.rfind("::");
  if (ns != std::string::npos) k = k.substr(ns + 2);
  if (k.size() > 48) k = k.substr(0, 48);
  return (op.empty() ? std::string("(no op)") : op) + ": " + k;
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

/// Candidate expressions of sizes, parsed once, valued at the trace.
class Vocabulary {
 public:
  explicit Vocabulary(const Symbols& sym) {
    for (const auto& n : models::stack_base_symbols()) table_.add(n);
    values_.assign(table_.size(), 0.0);
    for (const auto& [name, v] : sym) {
      const int slot = table_.find(name);
      if (slot >= 0) values_[static_cast<std::size_t>(slot)] = v;
    }
  }
  double value(const std::string& text) const {
    auto it = cache_.find(text);
    if (it != cache_.end()) return it->second;
    auto e = Expr::parse(text, table_, "", "");
    const double v = e ? e->eval(values_) : std::nan("");
    cache_.emplace(text, v);
    return v;
  }
  /// The first of `preferred`, then of `general`, whose value is x; "" when none.
  std::string match(double x, const std::vector<const char*>& preferred,
                    const std::vector<const char*>& general) const {
    for (const char* c : preferred)
      if (std::fabs(value(c) - x) < 0.5) return c;
    for (const char* c : general)
      if (std::fabs(value(c) - x) < 0.5) return c;
    return "";
  }

 private:
  SymbolTable table_;
  std::vector<double> values_;
  mutable std::unordered_map<std::string, double> cache_;
};

const std::vector<const char*> kDims = {"T", "H", "Q", "K", "Q+2*K", "F", "2*F", "Vu", "Q+K", "2*K",
                                        "s", "b", "d", "heads_r", "kv_r", "b*heads_r", "b*kv_r",
                                        // MoE (docs/moe.md): experts, routed token copies, expert widths
                                        "E", "E_r", "Fe_r", "2*Fe_r", "Fsh_r", "2*Fsh_r", "Tx", "Te"};
// The token lists end with the element counts of an unfused attention's score matrix (b heads s^2: its scale, mask,
// softmax and dropout kernels), which grow with the sequence, not the tokens (Megatron-Core's local DotProductAttention,
// transformers' eager attention; session 28: priced linearly in T they came out -51% at 1x8192 from a 2x2560 trace).
const std::vector<const char*> kTokenWidthsH = {"T*H", "T*F", "T*2*F", "T*Q", "T*K", "T*(Q+2*K)", "T*(Q+K)",
                                                "T*2*K", "T*Vu", "T*heads_r", "T*kv_r", "T*Q/2", "T*K/2", "T*F/2",
                                                "T", "T*d",
                                                "Tx*H", "Tx*Fe_r", "Tx*2*Fe_r", "T*E", "T*topk", "Tx",
                                                "T*Fsh_r", "T*2*Fsh_r", "b*heads_r*s*s", "b*kv_r*s*s"};
/// An MoE model's layers (symbol moe_layer = 1 at the trace): the routed token copies' widths first, so that an
/// expert kernel scales with top_k and the experts per rank, not with a dense width of the same value.
const std::vector<const char*> kTokenWidthsMoe = {"T*H", "Tx*H", "Tx*Fe_r", "Tx*2*Fe_r", "T*E", "T*topk", "Tx",
                                                  "T*Q", "T*K", "T*(Q+2*K)", "T*(Q+K)", "T*2*K", "T*Vu", "T*heads_r",
                                                  "T*kv_r", "T*Q/2", "T*K/2", "T", "T*d", "T*Fsh_r", "T*2*Fsh_r",
                                                  "b*heads_r*s*s", "b*kv_r*s*s"};
const std::vector<const char*> kTokenWidthsQ = {"T*Q", "T*K", "T*(Q+2*K)", "T*Q/2", "T*K/2", "T*(Q+K)", "T*2*K",
                                                "T*H", "T*F", "T*2*F", "T*Vu", "T*heads_r", "T*kv_r", "T*F/2",
                                                "T", "T*d", "b*heads_r*s*s", "b*kv_r*s*s"};
const std::vector<const char*> kParams = {"H*Q", "H*K", "H*(Q+2*K)", "H*F", "H*2*F", "Vu*H", "P_layer", "H", "Q",
                                          "K", "F", "2*F", "Vu", "Q+2*K", "s*d", "s*d/2", "s"};

struct Gemm {
  double M = 0, N = 0, K = 0, batch = 1;
  std::string dtype = "compute";
  bool ok = false;
};

Gemm gemm_of(const std::string& op, const std::vector<OpInput>& in) {
  Gemm g;
  if (op == "aten::_grouped_mm" && in.size() >= 2) {
    // torch._grouped_mm: a 2D x 3D product (forward, dgrad: tokens x K by groups x K x N, offsets over the tokens)
    // or a 2D x 2D one with offsets over K (wgrad: K x tokens by tokens x N, one K x N output per group). As one
    // batched GEMM of the mean group: batch = groups, tokens / groups per group.
    const auto &A = in[0].dims, &B = in[1].dims;
    const double groups = in.size() >= 3 && in[2].dims.size() == 1 ? static_cast<double>(in[2].dims[0]) : 0.0;
    if (A.size() == 2 && B.size() == 3 && B[0] > 0) {
      g.batch = static_cast<double>(B[0]);
      g.M = static_cast<double>(A[0]) / g.batch, g.K = static_cast<double>(A[1]), g.N = static_cast<double>(B[2]);
      g.ok = true;
    } else if (A.size() == 2 && B.size() == 2 && groups > 0.0) {
      g.batch = groups;
      g.M = static_cast<double>(A[0]), g.K = static_cast<double>(A[1]) / groups, g.N = static_cast<double>(B[1]);
      g.ok = true;
    }
    if (g.ok) g.dtype = gemm_dtype(op, in[0]);
    return g;
  }
  auto two = [&](std::size_t a, std::size_t b) {
    if (in.size() <= std::max(a, b)) return;
    const auto &A = in[a].dims, &B = in[b].dims;
    if (A.size() == 2 && B.size() == 2) {
      g.M = static_cast<double>(A[0]), g.K = static_cast<double>(A[1]), g.N = static_cast<double>(B[1]), g.ok = true;
    } else if (A.size() == 3 && B.size() == 3) {
      g.batch = static_cast<double>(A[0]);
      g.M = static_cast<double>(A[1]), g.K = static_cast<double>(A[2]), g.N = static_cast<double>(B[2]), g.ok = true;
    }
    if (g.ok) g.dtype = gemm_dtype(op, in[a]);
  };
  if (op == "aten::mm" || op == "aten::bmm" || op == "aten::_scaled_mm") two(0, 1);
  else if (op == "aten::addmm" || op == "aten::baddbmm") two(1, 2);
  else if ((op == "aten::linear" || op == "aten::matmul") && in.size() >= 2 && !in[0].dims.empty() && !in[1].dims.empty()) {
    const auto &x = in[0].dims, &w = in[1].dims;
    double m = 1.0;
    for (std::size_t i = 0; i + 1 < x.size(); ++i) m *= static_cast<double>(x[i]);
    g.M = m;
    g.K = static_cast<double>(x.back());
    g.N = static_cast<double>(op == "aten::linear" ? w.front() : w.back());
    g.ok = true;
    g.dtype = gemm_dtype(op, in[0]);
  }
  return g;
}

struct Acc {
  std::string phase, key;
  Json row;
  double time_us = 0.0, kernels = 0.0, bytes = 0.0;  ///< totals over the occurrences
  bool per_layer = false;
  std::string bytes_expr;  ///< memory rows: the element-count expression
};

}  // namespace

std::optional<std::string> fp8_gemm_op(const Events& ev, const Step& step) {
  for (const Kernel& k : step.kernels) {
    if (k.inner < 0) continue;
    const CpuOp& op = ev.ops[static_cast<std::size_t>(k.inner)];
    const std::string& name = ev.name(op.name);
    if (gemm_of(name, op.inputs).dtype == "fp8") return name;
  }
  return std::nullopt;
}

Json build_rows(const Events& ev, const Step& st, const Symbols& sym, TraceImportSummary& sum,
                bool linear_elementwise) {
  const Vocabulary voc(sym);
  const int L = st.layers;
  const double T = voc.value("T");
  // Forward GEMM roles by layer position, and each layer's attention span (for the Q/K widths of what lies in it).
  std::vector<Role> role(st.kernels.size(), Role::none);
  std::vector<std::pair<double, double>> attn_span(static_cast<std::size_t>(L), {0.0, -1.0});
  std::vector<std::pair<double, Role>> fwd_gemm_at;  // launch time of each forward GEMM, with its role
  auto inner_name = [&](const Kernel& k) {
    return k.inner >= 0 ? ev.name(ev.ops[static_cast<std::size_t>(k.inner)].name) : std::string();
  };
  auto inputs = [&](const Kernel& k) -> const std::vector<OpInput>& {
    static const std::vector<OpInput> none;
    return k.inner >= 0 ? ev.ops[static_cast<std::size_t>(k.inner)].inputs : none;
  };
  {
    std::vector<int> state(static_cast<std::size_t>(L + 2), 0);  // 0 before attention, 1 after, 2 after attn_out
    for (std::size_t i = 0; i < st.kernels.size(); ++i) {
      const Kernel& k = st.kernels[i];
      if (k.phase != Phase::forward) continue;
      const std::string op = inner_name(k);
      const double t = ev.launches[k.launch].ts;
      const Gemm g = gemm_of(op, inputs(k));
      if (k.segment >= 0 && k.segment < L) {
        int& s = state[static_cast<std::size_t>(k.segment)];
        auto& span = attn_span[static_cast<std::size_t>(k.segment)];
        if (has(op, "attention") && s == 0) s = 1;
        if (g.ok) {
          if (s == 0) {
            role[i] = Role::attn_in;
            if (span.second < span.first) span.first = t;
          } else if (s == 1) {
            role[i] = Role::attn_out;
            span.second = t;
            s = 2;
          } else {
            role[i] = std::fabs(g.K - voc.value("F")) < 0.5 ? Role::mlp_out : Role::mlp_in;
          }
        }
      } else if (g.ok && k.segment == L && std::fabs(g.N - voc.value("Vu")) < 0.5) {
        role[i] = Role::head;
      }
      if (g.ok) fwd_gemm_at.emplace_back(t, role[i]);
    }
  }
  auto role_of_forward_op = [&](std::int64_t op) {
    if (op < 0) return Role::none;
    const CpuOp& o = ev.ops[static_cast<std::size_t>(op)];
    auto it = std::lower_bound(fwd_gemm_at.begin(), fwd_gemm_at.end(), std::make_pair(o.ts, Role::none),
                               [](auto& a, auto& b) { return a.first < b.first; });
    return it != fwd_gemm_at.end() && it->first <= o.ts + o.dur ? it->second : Role::none;
  };
  auto in_attention = [&](const Kernel& k) {
    if (k.segment < 0 || k.segment >= L) return false;
    const auto& span = attn_span[static_cast<std::size_t>(k.segment)];
    const double t = k.phase == Phase::forward ? ev.launches[k.launch].ts
                     : k.forward_op >= 0 ? ev.ops[static_cast<std::size_t>(k.forward_op)].ts : -1.0;
    return t >= span.first && t <= span.second;
  };

  // Where a kernel works on a parameter's size (session 31): launched inside an AccumulateGrad node (the gradient's
  // cast and accumulation into .grad), or a cast whose input is a 2-D fp32 tensor (autocast's per-call weight copies).
  // Its size is then read as a weight's first; a trace whose tokens equal a width (T = H) otherwise writes such
  // kernels as activations that grow with the tokens (set o27).
  std::vector<std::pair<double, double>> accumulate;  // [ts, ts + dur] of the step's AccumulateGrad nodes, by ts
  for (const CpuOp& o : ev.ops)
    if (o.ts >= st.t0 && o.ts <= st.t1 && ev.name(o.name) == "torch::autograd::AccumulateGrad")
      accumulate.emplace_back(o.ts, o.ts + o.dur);
  std::sort(accumulate.begin(), accumulate.end());
  auto parameter_sized = [&](const Kernel& k, const std::string& op, const std::vector<OpInput>& in) {
    const double t = ev.launches[k.launch].ts;
    auto it = std::upper_bound(accumulate.begin(), accumulate.end(), std::make_pair(t, 1e300));
    if (it != accumulate.begin() && t <= std::prev(it)->second) return true;
    if (op != "aten::copy_" && op != "aten::_to_copy" && op != "aten::to") return false;
    const auto big = std::max_element(in.begin(), in.end(),
                                      [](const OpInput& a, const OpInput& b) { return a.elements < b.elements; });
    return big != in.end() && big->type == "float" && big->dims.size() == 2;
  };

  std::vector<Acc> rows;
  std::unordered_map<std::string, std::size_t> index;
  // Where every layer's forward waits for the GPU (Step::layer_sync_ts), the kernels launched after the first wait
  // are rows of their own, `after_sync` (the builder issues them after the host's synchronisation).
  const bool split = st.waits_in_every_layer();
  bool late = false;  // the kernel being added is one of those
  auto add = [&](const std::string& phase, const std::string& key, Json row, double us, double bytes,
                 const std::string& bytes_expr, bool per_layer) {
    const bool after = late && phase == "layer_forward";
    auto [it, fresh] = index.try_emplace(phase + "\n" + (after ? "after_sync\n" : "") + key, rows.size());
    if (fresh && after) row["after_sync"] = true;
    if (fresh) rows.push_back({phase, key, std::move(row), 0.0, 0.0, 0.0, per_layer, bytes_expr});
    Acc& a = rows[it->second];
    a.time_us += us;
    a.kernels += 1.0;
    a.bytes += bytes;
  };

  for (std::size_t i = 0; i < st.kernels.size(); ++i) {
    const Kernel& k = st.kernels[i];
    const GpuActivity& a = ev.gpu[k.gpu];
    const double us = a.dur;
    if (k.phase == Phase::comm) {
      sum.comm_gpu_s += us * 1e-6;
      continue;
    }
    std::string phase;
    bool per_layer = false;
    const bool fwd = k.phase == Phase::forward;
    late = split && fwd && k.segment >= 0 && k.segment < L &&
           ev.launches[k.launch].ts > st.layer_sync_ts[static_cast<std::size_t>(k.segment)];
    if (k.phase == Phase::optimizer) phase = "optimizer";
    else if (k.segment < 0) phase = fwd ? "embedding_forward" : "embedding_backward";
    else if (k.segment >= L) phase = fwd ? "head_forward" : "head_backward";
    else phase = fwd ? "layer_forward" : "layer_backward", per_layer = true;
    (phase == "optimizer" ? sum.optimizer_gpu_s : per_layer ? (fwd ? sum.layer_forward_gpu_s : sum.layer_backward_gpu_s)
                                                            : sum.edge_gpu_s) += us * 1e-6;
    const std::string op = inner_name(k);
    const std::string name = row_name(op, ev.name(a.name));
    const auto& in = inputs(k);

    if (phase == "optimizer") {
      // foreach / fused optimizer kernels: their work scales with the parameters. Kineto records no sizes for
      // tensor lists, so the bytes are ASSUMED 8 per parameter per op (the size class only; the time is measured).
      add(phase, "memory\n" + name, Json{{"name", name}, {"kind", "memory"}}, us, 0.0, "P_opt", false);
      continue;
    }
    // Attention.
    if (has(op, "attention") && a.kind == GpuActivity::Kind::kernel) {
      std::vector<const std::vector<std::int64_t>*> four;
      for (const auto& x : in)
        if (x.dims.size() == 4) four.push_back(&x.dims);
      if (!four.empty()) {
        const auto& q = *four.front();
        std::int64_t h = 0, kv = q[1];
        for (auto* d : four) h = std::max(h, (*d)[1]), kv = std::min(kv, (*d)[1]);
        const std::string eb = voc.match(static_cast<double>(q[0]), {"b"}, kDims);
        const std::string eh = voc.match(static_cast<double>(h), {"heads_r"}, kDims);
        const std::string ek = voc.match(static_cast<double>(kv), {"kv_r", "heads_r"}, kDims);
        const std::string es = voc.match(static_cast<double>(q[2]), {"s"}, kDims);
        const std::string ed = voc.match(static_cast<double>(q[3]), {"d"}, kDims);
        if (!eb.empty() && !eh.empty() && !ek.empty() && !es.empty() && !ed.empty()) {
          const bool backward = !fwd || has(op, "backward");
          Json row{{"name", name}, {"kind", "attention"}, {"pass", backward ? "backward" : "forward"},
                   {"batch", eb}, {"heads", eh}, {"kv_heads", ek}, {"head_dim", ed}, {"seq", es}, {"causal", true},
                   {"io", backward ? "8*(Q+K)*T" : "4*(Q+K)*T"}};
          // The kernel that ran: torch's SDPA picks cuDNN's fused attention on Hopper (aten::_cudnn_attention_*),
          // whose rate differs from FlashAttention-2's by up to 2x; the profile's rows of that kernel price it.
          if (has(op, "cudnn")) row["backend"] = "cudnn";
          add(phase, row.dump(), row, us, 0.0, "", per_layer);
          continue;
        }
      }
    }
    // GEMMs.
    const Gemm g = gemm_of(op, in);
    if (g.ok && a.kind == GpuActivity::Kind::kernel && op == "aten::_grouped_mm") {
      // Routed experts (docs/moe.md): groups are the rank's experts (E_r), the mean group the tokens per expert (Te),
      // the other two dims the hidden size and the expert width.
      const std::vector<const char*> widths = {"H", "Fe_r", "2*Fe_r", "Fsh_r", "2*Fsh_r"};
      const bool wgrad = std::fabs(g.K - voc.value("Te")) < 0.5;
      const std::string eB = voc.match(g.batch, {"E_r"}, {});
      const std::string eM = wgrad ? voc.match(g.M, widths, {}) : voc.match(g.M, {"Te"}, {});
      const std::string eK = wgrad ? std::string("Te") : voc.match(g.K, widths, {});
      const std::string eN = voc.match(g.N, widths, {});
      if (!eB.empty() && !eM.empty() && !eK.empty() && !eN.empty()) {
        Json row{{"name", name}, {"kind", "gemm"}, {"m", eN}, {"n", eM}, {"k", eK}, {"batch", eB}, {"dtype", g.dtype}};
        add(phase, row.dump(), row, us, 0.0, "", per_layer);
        continue;
      }
    }
    if (g.ok && a.kind == GpuActivity::Kind::kernel && op != "aten::_grouped_mm") {
      const Role r = fwd ? role[i] : role_of_forward_op(k.forward_op);
      // in/out widths of the role (forward: K in, N out)
      using Names = std::vector<const char*>;
      auto in_pref = [&]() -> Names {
        switch (r) {
          case Role::attn_in: case Role::mlp_in: case Role::head: return {"H"};
          case Role::attn_out: return {"Q"};
          case Role::mlp_out: return {"F"};
          default: return {};
        }
      };
      auto out_pref = [&]() -> Names {
        switch (r) {
          case Role::attn_in: return {"Q+2*K", "Q", "K", "Q+K", "2*K"};
          case Role::attn_out: case Role::mlp_out: return {"H"};
          case Role::mlp_in: return {"2*F", "F"};
          case Role::head: return {"Vu"};
          default: return {};
        }
      };
      std::string eM, eN, eK;
      const bool dgrad_like = std::fabs(g.M - T) < 0.5, wgrad_like = !dgrad_like && std::fabs(g.K - T) < 0.5;
      const auto as_wgrad = [&] {  // x^T dy: M in, N out, K tokens (or dy^T x: M out, N in)
        eK = "T";
        eM = voc.match(g.M, in_pref(), kDims);
        eN = voc.match(g.N, out_pref(), kDims);
        if (eM != "T" && eN != "T") return;
        // M and N are widths; a "T" among them is a width equal to the tokens that the other orientation names.
        const std::string m2 = voc.match(g.M, out_pref(), kDims), n2 = voc.match(g.N, in_pref(), kDims);
        if (!m2.empty() && !n2.empty() && m2 != "T" && n2 != "T") eM = m2, eN = n2;
      };
      if (fwd || dgrad_like) {
        // forward: M tokens, K in, N out; dgrad: M tokens, K out, N in
        eM = voc.match(g.M, {"T"}, kDims);
        eK = voc.match(g.K, fwd ? in_pref() : out_pref(), kDims);
        eN = voc.match(g.N, fwd ? out_pref() : in_pref(), kDims);
        // A linear's GEMM has one token dimension. Where the tokens equal the layer's input width (T = H: 2 x 1024
        // for a model of hidden 2048), a wgrad (M in = H, K tokens) also has M = T; read as a dgrad, its K found no
        // out width and became a second T, which grew it with T^2 (session 27's set o27, re-measured in session 31).
        if (!fwd && std::fabs(g.K - T) < 0.5 && (eK == "T" || eN == "T" || eK.empty() || eN.empty())) as_wgrad();
      } else if (wgrad_like) {
        as_wgrad();
      } else {
        eM = voc.match(g.M, {}, kDims), eN = voc.match(g.N, {}, kDims), eK = voc.match(g.K, {}, kDims);
      }
      const std::string eB = g.batch == 1.0 ? std::string("1") : voc.match(g.batch, {"b*heads_r", "b*kv_r"}, kDims);
      if (!eM.empty() && !eN.empty() && !eK.empty() && !eB.empty()) {
        // cuBLAS arguments of a row-major product: m = N, n = M (models/compute_model.hpp)
        Json row{{"name", name}, {"kind", "gemm"}, {"m", eN}, {"n", eM}, {"k", eK}, {"batch", eB}, {"dtype", g.dtype}};
        add(phase, row.dump(), row, us, 0.0, "", per_layer);
        continue;
      }
    }
    // Memory-bound: the expression of the largest tensor's element count; a gather or an embedding lookup moves
    // what its index selects, not its table.
    double bytes = 0.0, largest = 0.0, out_size = 2.0;
    for (const auto& x : in) {
      bytes += x.elements * dtype_bytes(x.type);
      if (x.elements > largest) largest = x.elements, out_size = dtype_bytes(x.type);
    }
    const bool lookup = op == "aten::gather" || op == "aten::index_select" || op == "aten::embedding";
    if (lookup && in.size() >= 2) {
      const auto idx = std::find_if(in.begin(), in.end(), [](const OpInput& x) { return x.type == "long int"; });
      const OpInput& table = in.front();
      if (idx != in.end() && !table.dims.empty()) {
        largest = op == "aten::gather" ? idx->elements : idx->elements * static_cast<double>(table.dims.back());
        bytes = largest * 2.0 * dtype_bytes(table.type) + idx->elements * 8.0;
        out_size = 0.0;
      }
    }
    bytes += largest * out_size;
    std::string e;
    if (largest > 0.0) {
      if (parameter_sized(k, op, in)) e = voc.match(largest, {}, kParams);
      if (e.empty())
        e = voc.match(largest, {}, in_attention(k) ? kTokenWidthsQ : voc.value("moe_layer") > 0.5 ? kTokenWidthsMoe : kTokenWidthsH);
      if (e.empty()) e = voc.match(largest, {}, kParams);
      if (e.empty() && T > 0.0 && std::fmod(largest, T) == 0.0) e = "T*" + num(largest / T);
    }
    if (e.empty()) {
      sum.fixed_gpu_s += us * 1e-6;
      add(phase, "fixed\n" + name, Json{{"name", name}, {"kind", "fixed"}}, us, 0.0, "", per_layer);
      continue;
    }
    // How the row moves to another shape (session 26, validation/session26/memory_scaling.py): elementwise kernels
    // keep their bandwidth from 25 to 550 MB per kernel in the traces of two programs at 5.3x the tokens, where the
    // back-to-back sweep gains 18% (it times each kernel's in-stream cost too): moved by the sweep they came out
    // 16-21% fast, linearly in their bytes -3..+5%. Reductions over the tokens grow slower than their bytes (the
    // sweep is nearer) and memsets not at all: those keep the sweep.
    Json row{{"name", name}, {"kind", "memory"}};
    const std::string kernel = ev.name(a.name);
    const bool reduction_or_memset =
        a.kind == GpuActivity::Kind::memset || kernel.find("reduce_kernel") != std::string::npos;
    if (linear_elementwise && !reduction_or_memset) row["scaling"] = "bytes";
    add(phase, "memory\n" + name + "\n" + e, row, us, bytes, e, per_layer);
  }

  Json phases = Json::object();
  for (const char* p : {"layer_forward", "layer_backward", "embedding_forward", "embedding_backward", "head_forward",
                        "head_backward", "optimizer"})
    phases[p] = Json::array();
  for (Acc& a : rows) {
    const double div = a.per_layer ? static_cast<double>(L) : 1.0;
    const double kernels = std::max(1.0, std::round(a.kernels / div));
    Json row = a.row;
    row["time_s"] = a.time_us * 1e-6 / div;
    if (a.phase == "optimizer") {
      const double p0 = voc.value("P_opt");
      row["kernels"] = "max(1, floor(" + num(kernels) + "*P_opt/" + num(p0) + " + 0.5))";
      row["bytes"] = "8*P_opt";  // ASSUMED size class (see above); the time is measured
    } else if (row["kind"] == "memory") {
      row["kernels"] = kernels;
      const double at = voc.value(a.bytes_expr);
      row["bytes"] = num(std::max(a.bytes / div, 1.0) / at) + "*(" + a.bytes_expr + ")";
    } else {
      row["kernels"] = kernels;
    }
    phases[a.phase].push_back(row);
  }
  return phases;
}

double parameter_tensors_per_layer(const Events& ev, const Step& st, const models::ModelSpec& model, double* nodes) {
  // The trace's AccumulateGrad nodes less the embedding, final norm and head tensors, spread over the layers;
  // without them, the model's count (weights of q, k, v, o, the MLP and 2 norms).
  const int L = std::max(1, st.layers);
  double n = 0.0;
  for (const CpuOp& op : ev.ops)
    if (op.ts >= st.t0 && op.ts <= st.t1 && ev.name(op.name) == "torch::autograd::AccumulateGrad") n += 1.0;
  if (nodes != nullptr) *nodes = n;
  const bool layernorm = model.norm == models::NormKind::layernorm;
  const bool swiglu = model.ffn == models::FfnKind::swiglu;
  const double edges = 1.0 + (model.positional == models::Positional::learned) + !model.tied_embeddings + 1.0 +
                       (layernorm && model.bias);
  const double per_layer = std::floor((n - edges) / L + 0.5);
  return per_layer >= 1.0 ? per_layer : 4.0 + (swiglu ? 3.0 : 2.0) + 2.0;
}

void add_accumulation_rows(const Events& ev, const Step& st, const models::ModelSpec& model, Json& phases,
                           TraceImportSummary& sum) {
  // Accumulation the trace already ran (zero_grad(set_to_none=False), or a traced micro-batch after the first):
  // its add kernels sit under AccumulateGrad and are rows of every micro-batch already.
  for (const Kernel& k : st.kernels) {
    if (k.phase != Phase::backward || k.outer < 0) continue;
    if (has(ev.name(ev.ops[static_cast<std::size_t>(k.outer)].name), "AccumulateGrad")) {
      sum.notes.push_back("gradient accumulation: the trace adds into existing gradients (AccumulateGrad kernels), "
                          "so its rows hold it already");
      return;
    }
  }
  // One add kernel per parameter tensor.
  double nodes = 0.0;
  const double per_layer = parameter_tensors_per_layer(ev, st, model, &nodes);
  const bool swiglu = model.ffn == models::FfnKind::swiglu;
  // Bytes per micro-batch after the first, averaged over the step's m: read .grad and the new gradient, write
  // .grad (3 g per element), sharded over the data-parallel ranks when FSDP2 / ZeRO-2+ keeps gradients sharded.
  const std::string acc = "(m - 1) / m * 3 * g * ", shard = " / (zero >= 2 ? dp : 1)";
  // An MoE layer's weights (symbols of docs/moe.md): attention, the rank's experts (sharded over the
  // expert-data-parallel ranks), the shared experts and the router; a dense layer's: P_layer (linear weights).
  const std::string mlp = swiglu ? "3" : "2";
  const std::string layer_bytes = model.is_moe()
      ? "(" + acc + "(H*(Q+2*K) + Q*H + " + mlp + "*Fsh_r*H + E*H)" + shard + " + " + acc + mlp + "*E_r*Fe_r*H / " +
            "(zero >= 2 ? edp : 1))"
      : acc + "P_layer" + shard;
  const std::string why = " (micro-batches after the first add their gradients into .grad; added by the import, "
                          "docs/stack-profile.md)";
  auto row = [&](const char* phase, const std::string& what, double kernels, const std::string& bytes) {
    phases[phase].push_back(Json{{"name", "gradient accumulation of " + what + why},
                                 {"kind", "memory"},
                                 {"when", "m > 1"},
                                 {"kernels", kernels},
                                 {"bytes", bytes}});
  };
  row("layer_backward", "the layer's parameters", per_layer, layer_bytes);
  row("embedding_backward", "the embedding table", 1.0, acc + "V * H" + shard);
  // A tied head's gradient is added into the embedding's before the table's gradient accumulates.
  if (!model.tied_embeddings) row("head_backward", "the LM head", 1.0, acc + "Vu * H" + shard);
  sum.notes.push_back("gradient accumulation: rows added for micro-batches 2..m (" + num(per_layer) +
                      " parameter tensors per layer, from " + num(nodes) + " AccumulateGrad nodes in the trace)");
}

}  // namespace scalescope::calib::trace
