// GEMM and attention shapes a model's layers run (formulas in model_shapes.hpp) and their file format.
#include "scalescope/calibrate/model_shapes.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

namespace scalescope::calib {

namespace {

using i64 = std::int64_t;

/// Forward, dgrad and wgrad of a linear layer Y[t x out] = X[t x in] W.
void linear(std::vector<GemmShape>& out, const std::string& label, i64 t, i64 in, i64 outw) {
  out.push_back({'N', 'N', outw, t, in, label + " fwd"});
  out.push_back({'T', 'N', in, t, outw, label + " dgrad"});
  out.push_back({'N', 'T', outw, in, t, label + " wgrad"});
}

void layer_gemms(std::vector<GemmShape>& out, const models::ModelSpec& m, i64 t, int tp, const std::string& tag) {
  const i64 h = m.hidden, q = m.q_dim() / tp, k = m.kv_dim() / tp, f = m.ffn_hidden / tp;
  const i64 v = (m.vocab + tp - 1) / tp;
  linear(out, tag + " qkv", t, h, q + 2 * k);
  linear(out, tag + " q", t, h, q);
  linear(out, tag + " k", t, h, k);
  linear(out, tag + " attn_out", t, q, h);
  if (m.ffn == models::FfnKind::swiglu) {
    linear(out, tag + " gate_up", t, h, 2 * f);
    linear(out, tag + " gate", t, h, f);
  } else {
    linear(out, tag + " fc1", t, h, f);
  }
  linear(out, tag + " down", t, f, h);
  linear(out, tag + " head", t, h, v);
}

/// An MoE layer's GEMMs beyond the attention (docs/moe.md): the router over the rank's Tr tokens, one routed
/// expert at Te = Tr top_k ep / E tokens (etp 1: the grouped GEMM is priced as E / ep of these), the shared experts
/// over all t tokens at their TP shard.
void moe_gemms(std::vector<GemmShape>& out, const models::ModelSpec& m, i64 t, int tp, int ep, const std::string& tag) {
  const models::MoeSpec& e = m.moe;
  const i64 h = m.hidden, tr = std::max<i64>(1, t / tp);
  const i64 te = std::max<i64>(1, tr * e.top_k * ep / e.experts);
  const bool swiglu = m.ffn == models::FfnKind::swiglu;
  linear(out, tag + " router", tr, h, e.experts);
  const std::string et = tag + " ep " + std::to_string(ep);
  linear(out, et + " expert " + (swiglu ? "gate_up" : "fc1"), te, h, (swiglu ? 2 : 1) * i64{e.ffn_hidden});
  linear(out, et + " expert down", te, e.ffn_hidden, h);
  if (const i64 fs = e.shared_width() / tp; fs > 0) {
    linear(out, tag + " shared " + (swiglu ? "gate_up" : "fc1"), t, h, (swiglu ? 2 : 1) * fs);
    linear(out, tag + " shared down", t, fs, h);
  }
}

/// Keeps the first of each (transa, transb, m, n, k), joining the labels of its repeats.
std::vector<GemmShape> unique(std::vector<GemmShape> in) {
  std::vector<GemmShape> out;
  std::map<std::tuple<char, char, i64, i64, i64>, std::size_t> seen;
  for (auto& g : in) {
    const auto key = std::make_tuple(g.transa, g.transb, g.m, g.n, g.k);
    if (auto it = seen.find(key); it != seen.end()) {
      out[it->second].label += " | " + g.label;
      continue;
    }
    seen.emplace(key, out.size());
    out.push_back(std::move(g));
  }
  return out;
}

}  // namespace

Expected<CalibrationShapes> calibration_shapes(const std::vector<models::ModelSpec>& models,
                                               const ShapeRequest& r) {
  CalibrationShapes s;
  for (const auto& d : r.dtypes) {
    if (!gemm_dtype_from_name(d)) {
      return input_error("", "--dtypes", "expected bf16, fp8_e4m3, fp8_e4m3_fast, fp16, tf32 or fp32, got '" + d + "'");
    }
    s.dtypes.push_back(d);
  }
  auto positive = [](const std::vector<int>& v) { return std::all_of(v.begin(), v.end(), [](int x) { return x > 0; }); };
  if (!positive(r.micro_batches) || !positive(r.seqs) || !positive(r.tps) || !positive(r.cps) || !positive(r.eps) ||
      r.micro_batches.empty() || r.tps.empty() || r.cps.empty()) {
    return input_error("", "--mbs/--seq/--tp/--cp/--ep", "expected lists of positive integers");
  }
  std::vector<GemmShape> gemms;
  for (const auto& m : models) {
    s.models.push_back(m.name);
    const std::vector<int> seqs = r.seqs.empty() ? std::vector<int>{m.seq_len} : r.seqs;
    for (int tp : r.tps) {
      if (m.heads % tp != 0 || m.ffn_hidden % tp != 0 || (m.kv_heads % tp != 0 && tp % m.kv_heads != 0)) continue;
      for (int mbs : r.micro_batches) {
        for (int full_seq : seqs) {
          for (int cp : r.cps) {
            if (cp > 1 && full_seq % (2 * cp) != 0) continue;
            const int seq = full_seq / cp;  // the rank's tokens of each sequence
            const std::string tag = m.name + " mbs " + std::to_string(mbs) + " seq " + std::to_string(full_seq) +
                                    (tp > 1 ? " tp " + std::to_string(tp) : "") +
                                    (cp > 1 ? " cp " + std::to_string(cp) : "");
            layer_gemms(gemms, m, i64{mbs} * seq, tp, tag);
            if (m.is_moe()) {
              for (int ep : r.eps) {
                if (ep > 0 && m.moe.experts % ep == 0) moe_gemms(gemms, m, i64{mbs} * seq, tp, ep, tag);
              }
            }
            s.attention.push_back({mbs, m.heads / tp, std::max(1, m.kv_heads / tp), m.head_size(), seq, true, tag});
            if (m.attention_dropout > 0.0) {  // the same kernel with dropout: its dropout factor (compute_model.hpp)
              AttentionCall d = s.attention.back();
              d.dropout = m.attention_dropout;
              d.label += " attention dropout";
              s.attention.push_back(std::move(d));
            }
            for (int doc : r.packed_doc_tokens) {  // the batched shape a packed plan is priced at
              if (doc <= 0 || doc >= seq) continue;
              const int docs =
                  static_cast<int>(std::max<i64>(1, std::llround(static_cast<double>(i64{mbs} * seq) / doc)));
              s.attention.push_back({docs, m.heads / tp, std::max(1, m.kv_heads / tp), m.head_size(), doc, true,
                                     tag + " packed docs of " + std::to_string(doc), "varlen"});
            }
          }
        }
      }
    }
  }
  s.gemms = unique(std::move(gemms));
  return s;
}

Json to_json(const CalibrationShapes& s) {
  Json gemm = Json::array(), att = Json::array();
  for (const auto& g : s.gemms) {
    gemm.push_back({{"transa", std::string(1, g.transa)}, {"transb", std::string(1, g.transb)}, {"m", g.m},
                    {"n", g.n}, {"k", g.k}, {"label", g.label}});
  }
  for (const auto& a : s.attention) {
    att.push_back({{"batch", a.batch}, {"heads", a.heads}, {"kv_heads", a.kv_heads}, {"head_dim", a.head_dim},
                   {"seq", a.seq}, {"causal", a.causal}, {"label", a.label}});
    if (a.backend != "flash") att.back()["backend"] = a.backend;
    if (a.dropout > 0.0) att.back()["dropout"] = a.dropout;
  }
  return Json{{"schema", "scalescope.calibration-shapes/1"}, {"models", s.models}, {"dtypes", s.dtypes},
              {"gemm", gemm}, {"attention", att}};
}

Expected<CalibrationShapes> calibration_shapes_from_json(const Json& doc, const std::string& file) {
  return catch_errors([&]() -> CalibrationShapes {
    JsonCursor root(doc, file);
    root.expect_object();
    root.expect_keys({"schema", "models", "dtypes", "gemm", "attention"});
    if (root.get_string("schema") != "scalescope.calibration-shapes/1") {
      root.at("schema").fail("expected \"scalescope.calibration-shapes/1\"");
    }
    CalibrationShapes s;
    if (auto m = root.find("models")) {
      for (const auto& c : m->items()) s.models.push_back(c.as_string());
    }
    for (const auto& c : root.at("dtypes").items()) {
      const std::string d = c.as_string();
      if (!gemm_dtype_from_name(d)) c.fail("expected bf16, fp8_e4m3, fp8_e4m3_fast, fp16, tf32 or fp32, got \"" + d + "\"");
      s.dtypes.push_back(d);
    }
    for (const auto& c : root.at("gemm").items()) {
      c.expect_keys({"transa", "transb", "m", "n", "k", "label"});
      GemmShape g;
      g.transa = c.at("transa").as_enum({"N", "T"})[0];
      g.transb = c.at("transb").as_enum({"N", "T"})[0];
      g.m = c.at("m").as_positive_int();
      g.n = c.at("n").as_positive_int();
      g.k = c.at("k").as_positive_int();
      constexpr i64 kMaxDim = i64{1} << 20;  // 1M rows or columns: beyond any transformer layer's GEMM
      if (g.m > kMaxDim || g.n > kMaxDim || g.k > kMaxDim) c.fail("expected m, n and k of at most 1048576");
      g.label = c.get_string("label", "");
      s.gemms.push_back(std::move(g));
    }
    if (auto att = root.find("attention")) {
      for (const auto& c : att->items()) {
        c.expect_keys({"batch", "heads", "kv_heads", "head_dim", "seq", "causal", "label", "backend", "dropout"});
        AttentionCall a;
        a.batch = c.at("batch").as_positive_int();
        a.heads = c.at("heads").as_positive_int();
        a.kv_heads = c.at("kv_heads").as_positive_int();
        a.head_dim = c.at("head_dim").as_positive_int();
        a.seq = c.at("seq").as_positive_int();
        a.causal = c.has("causal") ? c.at("causal").as_bool() : true;
        a.label = c.get_string("label", "");
        if (auto b = c.find("backend")) a.backend = b->as_enum({"flash", "varlen"});
        if (auto d = c.find("dropout")) a.dropout = d->as_dropout_probability();
        s.attention.push_back(std::move(a));
      }
    }
    return s;
  });
}

Expected<CalibrationShapes> calibration_shapes(const std::vector<std::string>& model_names_or_files,
                                               const ShapeRequest& request) {
  std::vector<models::ModelSpec> specs;
  for (const auto& name : model_names_or_files) {
    auto m = models::load_model_by_name_or_path(name);
    if (!m) return m.error();
    specs.push_back(std::move(m).value());
  }
  return calibration_shapes(specs, request);
}

Expected<CalibrationShapes> load_calibration_shapes(const std::string& file) {
  auto doc = read_json_file(file);
  if (!doc) return doc.error();
  return calibration_shapes_from_json(*doc, file);
}

}  // namespace scalescope::calib
