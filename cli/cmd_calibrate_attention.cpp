// `scalescope calibrate attention-check SHAPES --calibration PROFILE [--cluster C]`: what the compute model prices
// each attention shape of a file at (forward and backward GPU time), and, where the file measured the shape, the
// error. Shapes may be packed (`doc`: documents of that many tokens inside each sequence, attention within each,
// as Transformer Engine's THD format and the plan key packed_doc_tokens) or windowed (`window`: each query sees the
// `window` tokens up to itself, as sliding-window attention): both are priced as the fused stack prices them: from a
// profile's varlen rows by the tiles FlashAttention-2 computes (attention_tiles.hpp), else as causal attentions of
// `doc` (or 2 x `window`) tokens, batch x seq / that many of them.
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli_common.hpp"
#include "scalescope/calibrate/hardware.hpp"
#include "scalescope/sim/json_reader.hpp"

namespace scalescope::cli {

namespace {

struct AttentionCheckCmd {
  std::string file, calibration, cluster = "hgx-h200-8";
  Format format = Format::text;
};

struct Row {
  std::string label, backend;
  long long batch = 1, heads = 1, kv_heads = 1, head_dim = 1, seq = 1, doc = 0, window = 0;
  double dropout = 0.0;  ///< attention dropout inside the kernel (priced with the profile's dropout factor)
  std::optional<double> fwd_s, bwd_s;  ///< measured
  double pred_fwd = 0, pred_bwd = 0;
};

std::vector<Row> read_rows(const Json& doc, const std::string& file) {
  const JsonCursor root(doc, file);
  root.expect_object();
  const JsonCursor list = root.has("rows") ? root.at("rows") : root.at("attention");
  std::vector<Row> rows;
  for (const JsonCursor& r : list.items()) {
    Row x;
    x.label = r.get_string("label", r.get_string("model", ""));
    // The backend whose profile rows price the shape (a measurement's varlen kernel is FlashAttention's).
    x.backend = r.find("backend") ? r.at("backend").as_enum({"flash", "cudnn", "varlen"}) : "flash";
    x.batch = r.at("batch").as_positive_int();
    x.heads = r.at("heads").as_positive_int();
    x.kv_heads = r.find("kv_heads") ? r.at("kv_heads").as_positive_int() : x.heads;
    x.head_dim = r.at("head_dim").as_positive_int();
    x.seq = r.at("seq").as_positive_int();
    if (auto d = r.find("doc")) x.doc = d->as_positive_int();
    if (auto w = r.find("window")) x.window = w->as_positive_int();
    if (auto d = r.find("dropout")) x.dropout = d->as_dropout_probability();
    if (x.doc > x.seq) r.at("doc").fail("expected at most seq=" + std::to_string(x.seq) + " tokens");
    if (x.doc > 0 && x.window > 0) r.fail("expected `doc` or `window`, not both");
    if (x.heads > 1 << 16 || x.head_dim > 1 << 12 || x.seq > 1 << 24 || x.batch > 1 << 20)
      r.fail("expected heads <= 65536, head_dim <= 4096, seq <= 2^24, batch <= 2^20");
    if (auto f = r.find("fwd_s")) x.fwd_s = f->as_positive_number();
    if (auto b = r.find("bwd_s")) x.bwd_s = b->as_positive_number();
    rows.push_back(x);
  }
  return rows;
}

/// The shape the fused stack prices: packed documents as batch x seq / doc causal attentions of `doc` tokens; a
/// window as the row's sequences with that window (priced from kernels without windows as causal attentions of
/// 2 x window tokens: AttentionShape::span_shape).
models::AttentionShape priced_shape(const Row& r) {
  models::AttentionShape s;
  s.batch = r.doc > 0 ? std::max<long long>(1, std::llround(static_cast<double>(r.batch) * r.seq / r.doc)) : r.batch;
  s.heads = r.heads;
  s.kv_heads = r.kv_heads;
  s.head_dim = r.head_dim;
  s.seq = r.doc > 0 ? r.doc : r.seq;
  s.window = std::llround(models::sliding_window_priced(static_cast<double>(r.seq), static_cast<double>(r.window)));
  s.causal = true;
  s.dropout = r.dropout;
  // Packed documents and sliding windows run the varlen kernel: priced from the profile's varlen rows where it has
  // them, else from its flash rows (ComputeModel::attention).
  s.backend = r.doc > 0 || r.window > 0 ? models::AttentionBackend::varlen : models::attention_backend_named(r.backend);
  return s;
}

std::string fmt(double v, const char* f) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

int run(const AttentionCheckCmd& o) {
  const std::string cmd = "calibrate attention-check";
  auto doc = read_json_file(o.file);
  if (!doc) return report(cmd, doc.error());
  auto rows = catch_errors([&] { return read_rows(*doc, o.file); });
  if (!rows) return report(cmd, rows.error());
  auto cluster = load_cluster_by_name_or_path(o.cluster, ClusterOptions{1, {}});
  if (!cluster) return report(cmd, cluster.error());
  auto hw = calib::load_hardware_models(o.calibration, *cluster);
  if (!hw) return report(cmd, hw.error());
  Json out = Json::array();
  Table t;
  t.header = {"shape", "b x h x s x d", "doc/window", "pred fwd us", "meas fwd us", "err", "pred bwd us", "meas bwd us", "err"};
  std::vector<double> errs;
  for (Row& r : *rows) {
    const models::AttentionShape s = priced_shape(r);
    const double f = s.forward_flops();
    const Bytes io(0.0);
    r.pred_fwd = hw->compute.attention(s, false, Flops(f), io).time.value;
    r.pred_bwd = hw->compute.attention(s, true, Flops(2.5 * f), io).time.value;
    auto err = [&](std::optional<double> m, double p) {
      if (!m) return std::string("-");
      errs.push_back(p / *m - 1.0);
      return fmt(100.0 * (p / *m - 1.0), "%+.1f%%");
    };
    std::string span = r.doc > 0 ? "doc " + std::to_string(r.doc) : r.window > 0 ? "window " + std::to_string(r.window) : "-";
    if (r.dropout > 0.0) span += ", dropout " + fmt(r.dropout, "%g");
    t.rows.push_back({r.label, std::to_string(r.batch) + "x" + std::to_string(r.heads) + "x" + std::to_string(r.seq) + "x" +
                                   std::to_string(r.head_dim),
                      span, fmt(1e6 * r.pred_fwd, "%.1f"), r.fwd_s ? fmt(1e6 * *r.fwd_s, "%.1f") : "-", err(r.fwd_s, r.pred_fwd),
                      fmt(1e6 * r.pred_bwd, "%.1f"), r.bwd_s ? fmt(1e6 * *r.bwd_s, "%.1f") : "-", err(r.bwd_s, r.pred_bwd)});
    Json j{{"label", r.label}, {"backend", r.backend}, {"batch", r.batch}, {"heads", r.heads}, {"kv_heads", r.kv_heads},
           {"head_dim", r.head_dim}, {"seq", r.seq}, {"predicted_fwd_s", r.pred_fwd}, {"predicted_bwd_s", r.pred_bwd},
           {"priced_as", {{"batch", s.span_shape().batch}, {"seq", s.span_shape().seq}, {"causal", true}}}};
    if (r.doc > 0) j["doc"] = r.doc;
    if (r.window > 0) j["window"] = r.window;
    if (r.dropout > 0.0) j["dropout"] = r.dropout;
    if (r.fwd_s) j["fwd_s"] = *r.fwd_s;
    if (r.bwd_s) j["bwd_s"] = *r.bwd_s;
    out.push_back(j);
  }
  double median = 0.0;
  if (!errs.empty()) {
    std::vector<double> a;
    for (double e : errs) a.push_back(std::fabs(e));
    std::sort(a.begin(), a.end());
    median = a.size() % 2 ? a[a.size() / 2] : 0.5 * (a[a.size() / 2 - 1] + a[a.size() / 2]);
  }
  if (o.format == Format::json) {
    Json j{{"calibration", o.calibration}, {"compute", hw->compute_source}, {"rows", out}};
    if (!errs.empty()) j["median_abs_error"] = median;
    print_stdout(dump_json(j));
    return 0;
  }
  std::string s = t.to_text() + "compute: " + hw->compute_source + "\n";
  if (!errs.empty())
    s += "median |error| " + fmt(100.0 * median, "%.1f") + " % over " + std::to_string(errs.size()) + " forward and backward times\n";
  print_stdout(s);
  return 0;
}

}  // namespace

void register_calibrate_attention_check(CLI::App* calibrate, Context& ctx) {
  auto o = std::make_shared<AttentionCheckCmd>();
  CLI::App* sub = calibrate->add_subcommand(
      "attention-check",
      "Price every attention shape of a file (`calibrate shapes` output, or rows of an attention measurement) with a "
      "calibration profile, as the fused stack prices it: packed documents (`doc`) and sliding windows (`window`) by "
      "the tiles FlashAttention-2 computes when the profile has varlen rows, else as causal attentions of doc "
      "(2 x window) tokens; where a row measured fwd_s / bwd_s, the error of each");
  sub->add_option("FILE", o->file, "Shapes or measurement JSON (rows or attention: batch, heads, kv_heads, head_dim, "
                                   "seq, optional doc or window, backend, fwd_s, bwd_s)")
      ->required();
  sub->add_option("--calibration", o->calibration, "Calibration profile (name or file) whose attention rows price them")
      ->required();
  sub->add_option("--cluster", o->cluster, "Cluster whose GPU the profile is for (its datasheet prices what the "
                                           "profile did not measure)")
      ->capture_default_str();
  add_format_option(sub, o->format);
  sub->callback([o, &ctx] { ctx.exit_code = run(*o); });
}

}  // namespace scalescope::cli
