// A100 validation: reads the published / measured rows, predicts each with the analytical simulator
// on superpod-a100 (datasheet compute model, built-in collective parameters), and summarises.
#include "validate_a100.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <numeric>
#include <sstream>

#include "scalescope/models/predict.hpp"

namespace scalescope::cli {

namespace fs = std::filesystem;

double mape(const std::vector<ValidationRow>& rows) {
  double sum = 0;
  int n = 0;
  for (const auto& r : rows) {
    if (!r.skipped.empty()) continue;
    sum += std::fabs(r.ape());
    ++n;
  }
  return n ? sum / n : std::nan("");
}

namespace {

std::vector<double> ranks_of(const std::vector<double>& v) {
  std::vector<std::size_t> idx(v.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) { return v[a] < v[b]; });
  std::vector<double> r(v.size());
  for (std::size_t i = 0; i < idx.size();) {
    std::size_t j = i;
    while (j + 1 < idx.size() && v[idx[j + 1]] == v[idx[i]]) ++j;
    const double avg = (static_cast<double>(i) + static_cast<double>(j)) / 2.0 + 1.0;
    for (std::size_t k = i; k <= j; ++k) r[idx[k]] = avg;
    i = j + 1;
  }
  return r;
}

}  // namespace

double spearman(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size() || a.size() < 3) return std::nan("");
  const auto ra = ranks_of(a), rb = ranks_of(b);
  const double n = static_cast<double>(a.size());
  const double ma = std::accumulate(ra.begin(), ra.end(), 0.0) / n, mb = std::accumulate(rb.begin(), rb.end(), 0.0) / n;
  double sab = 0, saa = 0, sbb = 0;
  for (std::size_t i = 0; i < ra.size(); ++i) {
    sab += (ra[i] - ma) * (rb[i] - mb);
    saa += (ra[i] - ma) * (ra[i] - ma);
    sbb += (rb[i] - mb) * (rb[i] - mb);
  }
  return saa > 0 && sbb > 0 ? sab / std::sqrt(saa * sbb) : std::nan("");
}

std::vector<GroupStats> group_stats(const ValidationSet& set) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<const ValidationRow*>> by;
  for (const auto& r : set.rows) {
    if (!r.skipped.empty()) continue;
    if (!by.count(r.group)) order.push_back(r.group);
    by[r.group].push_back(&r);
  }
  std::vector<GroupStats> out;
  for (const auto& g : order) {
    std::vector<ValidationRow> rows;
    std::vector<double> meas, pred;
    for (const auto* r : by[g]) {
      rows.push_back(*r);
      meas.push_back(r->measured);
      pred.push_back(r->predicted);
    }
    out.push_back({g, static_cast<int>(rows.size()), mape(rows), spearman(meas, pred)});
  }
  return out;
}

namespace {

using models::ModelSpec;
using models::Plan;

struct Rig {
  Cluster cluster;
  CollectiveModel coll;
  models::ComputeModel compute;
  Rig(Cluster c, models::ComputeModel m)
      : cluster(std::move(c)), coll(cluster, datasheet_collective_params()), compute(std::move(m)) {}
};

/// superpod-a100 clusters by node count, built once each.
class Rigs {
 public:
  Expected<Rig*> get(int gpus) {
    const int nodes = (gpus + 7) / 8;
    auto it = rigs_.find(nodes);
    if (it != rigs_.end()) return it->second.get();
    auto c = load_cluster_by_name_or_path("superpod-a100", ClusterOptions{nodes, {}});
    if (!c) return c.error();
    auto m = models::ComputeModel::datasheet(c->gpu_spec());
    if (!m) return m.error();
    auto rig = std::make_unique<Rig>(std::move(c).value(), std::move(m).value());
    Rig* p = rig.get();
    rigs_.emplace(nodes, std::move(rig));
    return p;
  }

 private:
  std::map<int, std::unique_ptr<Rig>> rigs_;
};

Expected<std::vector<std::vector<std::string>>> read_csv(const fs::path& file) {
  std::ifstream in(file);
  if (!in) return input_error(file.string(), "", "cannot open file for reading");
  std::vector<std::vector<std::string>> rows;
  std::string line;
  bool header = true;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    if (header) {  // the first line names the columns (possibly after a UTF-8 byte-order mark)
      header = false;
      continue;
    }
    std::vector<std::string> cells;
    std::stringstream ss(line);
    std::string cell;
    while (std::getline(ss, cell, ',')) cells.push_back(cell);
    rows.push_back(std::move(cells));
  }
  return rows;
}

double num(const std::vector<std::string>& row, std::size_t i, const fs::path& file, std::size_t line) {
  if (i >= row.size()) {
    throw ErrorException(input_error(file.string(), "line " + std::to_string(line), "too few columns"));
  }
  try {
    return std::stod(row[i]);
  } catch (...) {
    throw ErrorException(input_error(file.string(), "line " + std::to_string(line) + ", column " + std::to_string(i + 1),
                                     "expected a number, got '" + row[i] + "'"));
  }
}

ModelSpec gpt(const std::string& name, int layers, int hidden, int heads, std::int64_t vocab, int seq) {
  ModelSpec s;
  s.name = name;
  s.layers = layers;
  s.hidden = hidden;
  s.heads = heads;
  s.kv_heads = heads;
  s.ffn_hidden = 4 * hidden;
  s.ffn = models::FfnKind::gelu;
  s.norm = models::NormKind::layernorm;
  s.bias = true;
  s.vocab = vocab;
  s.tied_embeddings = true;
  s.seq_len = seq;
  s.positional = models::Positional::learned;
  return s;
}

/// Megatron-LM 2021 / Megatron-DeepSpeed as run in these measurements (assumptions listed in the report).
Plan megatron_plan(int tp, int pp, int dp, int mbs, int gbs) {
  Plan p;
  p.tp = tp;
  p.pp = pp;
  p.dp = dp;
  p.mbs = mbs;
  p.gbs = gbs;
  p.schedule = models::Schedule::one_f_one_b;
  p.recompute = models::Recompute::full;
  p.precision = models::Precision::mixed;
  p.bucket_MB = 1e9;  // one all-reduce of the whole contiguous gradient buffer ...
  p.overlap = false;  // ... after the backward (no bucketing, no overlap)
  return p;
}

models::PredictOptions predict_options() {
  models::PredictOptions o;
  o.fidelity = Fidelity::analytical;
  o.build.costs.flash_attention = false;  // Megatron 2021 fused softmax, scores in memory
  o.build.costs.dropout = true;
  return o;
}

/// Predicts one row; fills predicted (step time in s) or skipped.
double predict_step(Rigs& rigs, const ModelSpec& m, const Plan& p, ValidationRow& row) {
  auto rig = rigs.get(p.gpus());
  if (!rig) {
    row.skipped = rig.error().str();
    return 0;
  }
  auto pred = models::predict(m, p, (*rig)->cluster, (*rig)->coll, (*rig)->compute, predict_options());
  if (!pred) {
    row.skipped = pred.error().str();
    return 0;
  }
  row.fits_memory = pred->fits_memory;
  return pred->step_time_s;
}

std::string plan_label(int tp, int pp, int dp, int mbs, int gbs) {
  return "tp=" + std::to_string(tp) + ",pp=" + std::to_string(pp) + ",dp=" + std::to_string(dp) +
         ",mbs=" + std::to_string(mbs) + ",gbs=" + std::to_string(gbs);
}

std::vector<std::string> common_assumptions() {
  return {"Cluster superpod-a100 (topologies/superpod-a100.json): DGX A100 80GB nodes, 8 x 200 Gb/s HDR "
          "InfiniBand per node, 3-tier non-blocking fat tree; built with ceil(GPUs/8) nodes.",
          "Compute: datasheet roofline (no A100 calibration profile): A100 312 TFLOP/s bf16/fp16 dense, "
          "2,039 GB/s HBM; assumed 0.75 of peak for GEMMs, 0.7 of HBM for elementwise kernels, 0.85 for GEMM "
          "operand traffic, 5 us launch overhead per kernel (ComputeAssumptions defaults; nothing tuned here).",
          "Attention: unfused (Megatron 2021 style: QK^T and AV batched GEMMs, fused scale-mask-softmax and "
          "dropout kernels, scores in memory), not FlashAttention.",
          "Collectives: built-in datasheet NCCL parameters (datasheet_collective_params), analytical fidelity, "
          "one representative pipeline (symmetric).",
          "Training: mixed precision (16-bit compute, fp32 gradients all-reduced), Adam, full activation "
          "recompute, 1F1B schedule, one gradient all-reduce of the whole buffer after the backward (no "
          "bucketing, no overlap, as in Megatron-LM 2021 and vTrain's use_gradient_bucket: false).",
          "Model: GPT (ffn 4h, GeLU, LayerNorm, biases, learned positions, tied embeddings), vocabulary padded "
          "to a multiple of 128 x tp as Megatron does.",
          "No parameter was fitted or tuned on these rows."};
}

Expected<ValidationSet> narayanan(Rigs& rigs, const fs::path& file) {
  return catch_errors([&] {
    auto rows = read_csv(file).take_or_throw();
    ValidationSet set;
    set.name = "narayanan2021";
    set.title = "Narayanan et al. 2021, Table 1 (Megatron-LM weak scaling on Selene, A100 80GB)";
    set.quantity = "achieved TFLOP/s per GPU";
    set.source = "D. Narayanan et al., 'Efficient Large-Scale Language Model Training on GPU Clusters Using "
                 "Megatron-LM', SC'21 (arXiv:2104.04473), Table 1; typed into " + file.filename().string();
    set.assumptions = common_assumptions();
    set.assumptions.push_back("Table 1 gives no micro-batch size or schedule: assumed mbs = 1 and the non-interleaved "
                              "1F1B schedule; dp = GPUs / (tp * pp); vocabulary 51,200, sequence 2,048 (paper).");
    set.assumptions.push_back("Predicted TFLOP/s = F / (step time x GPUs) with the paper's eq. (3), "
                              "F = 96 B s l h^2 (1 + s/(6h) + V/(16 l h)) (counts the recompute forward).");
    set.assumptions.push_back("Not modelled: the paper's scatter/gather of PP activations over TP ranks (PP sends "
                              "carry the full mbs*s*h*2 bytes here), data loading and logging.");
    std::size_t line = 1;
    for (const auto& r : rows) {
      ++line;
      const double params = num(r, 0, file, line);
      const int heads = static_cast<int>(num(r, 1, file, line)), hidden = static_cast<int>(num(r, 2, file, line));
      const int layers = static_cast<int>(num(r, 3, file, line)), tp = static_cast<int>(num(r, 4, file, line));
      const int pp = static_cast<int>(num(r, 5, file, line)), gpus = static_cast<int>(num(r, 6, file, line));
      const int batch = static_cast<int>(num(r, 7, file, line));
      const double tflops = num(r, 8, file, line);
      const int dp = gpus / (tp * pp);
      char name[64];
      std::snprintf(name, sizeof name, "%.1fB", params);
      ValidationRow row;
      row.group = "Table 1 (weak scaling)";
      row.label = std::string(name) + " " + std::to_string(gpus) + " GPUs " + plan_label(tp, pp, dp, 1, batch);
      row.measured = tflops;
      const ModelSpec m = gpt(std::string("narayanan-") + name, layers, hidden, heads, 51200, 2048);
      const double step = predict_step(rigs, m, megatron_plan(tp, pp, dp, 1, batch), row);
      if (row.skipped.empty()) {
        const double B = batch, s = 2048, l = layers, h = hidden, V = 51200;
        const double F = 96.0 * B * s * l * h * h * (1.0 + s / (6.0 * h) + V / (16.0 * l * h));
        row.predicted = F / (step * gpus) / 1e12;
      }
      set.rows.push_back(std::move(row));
    }
    return set;
  });
}

Expected<ValidationSet> vtrain(Rigs& rigs, const fs::path& file, bool multi) {
  return catch_errors([&] {
    auto rows = read_csv(file).take_or_throw();
    ValidationSet set;
    set.name = multi ? "vtrain-multi" : "vtrain-single";
    set.title = multi ? "vTrain multi-node A100 measurements (64-512 GPUs)" : "vTrain single-node A100 measurements (2-8 GPUs)";
    set.quantity = "iteration time (ms)";
    set.source = "VIA-Research/vTrain data/ (commit f8dda84, MIT), copied to validation/a100/vtrain/" +
                 file.filename().string() + "; Megatron-DeepSpeed on A100, 8 GPUs per node";
    set.assumptions = common_assumptions();
    set.assumptions.push_back("Vocabulary not in the CSV: GPT-2's 50,257 (Megatron's default tokenizer), padded.");
    set.assumptions.push_back("vTrain's configs give inter_node_bandwidth 800 and intra_node_bandwidth 150 without "
                              "units; the cluster here has 8 x 200 Gb/s per node (1,600 Gb/s) and NVLink3 via "
                              "NVSwitch (300 GB/s per direction per GPU): the fabric they measured on may be slower.");
    const std::size_t off = multi ? 1 : 0;  // the multi-node file starts with the parameter count
    std::size_t line = 1;
    for (const auto& r : rows) {
      ++line;
      const int gpus = static_cast<int>(num(r, off + 0, file, line)), gbs = static_cast<int>(num(r, off + 1, file, line));
      const int mbs = static_cast<int>(num(r, off + 2, file, line)), hidden = static_cast<int>(num(r, off + 3, file, line));
      const int heads = static_cast<int>(num(r, off + 4, file, line)), layers = static_cast<int>(num(r, off + 5, file, line));
      const int seq = static_cast<int>(num(r, off + 6, file, line)), tp = static_cast<int>(num(r, off + 7, file, line));
      const int dp = static_cast<int>(num(r, off + 8, file, line)), pp = static_cast<int>(num(r, off + 9, file, line));
      const double ms = num(r, off + 10, file, line);
      char group[128];
      if (multi) {
        std::snprintf(group, sizeof group, "%sB h=%d L=%d, %d GPUs", r[0].c_str(), hidden, layers, gpus);
      } else {
        std::snprintf(group, sizeof group, "h=%d a=%d L=%d s=%d, %d GPUs", hidden, heads, layers, seq, gpus);
      }
      ValidationRow row;
      row.group = group;
      row.label = plan_label(tp, pp, dp, mbs, gbs);
      row.measured = ms;
      if (tp * pp * dp != gpus) {
        row.skipped = "tp*pp*dp != GPUs";
      } else {
        const ModelSpec m = gpt("vtrain-h" + std::to_string(hidden) + "-l" + std::to_string(layers), layers, hidden, heads,
                                50257, seq);
        const double step = predict_step(rigs, m, megatron_plan(tp, pp, dp, mbs, gbs), row);
        if (row.skipped.empty()) row.predicted = step * 1e3;
      }
      set.rows.push_back(std::move(row));
    }
    return set;
  });
}

}  // namespace

Expected<std::vector<ValidationSet>> run_a100_validation(const fs::path& dir, const std::string& which) {
  if (which != "all" && which != "narayanan2021" && which != "vtrain-multi" && which != "vtrain-single") {
    return input_error("", "--set", "expected all | narayanan2021 | vtrain-multi | vtrain-single, got '" + which + "'");
  }
  Rigs rigs;
  std::vector<ValidationSet> out;
  auto add = [&](Expected<ValidationSet> s) -> std::optional<Error> {
    if (!s) return s.error();
    std::fprintf(stderr, "scalescope validate: %s: %zu rows\n", s->name.c_str(), s->rows.size());
    out.push_back(std::move(s).value());
    return std::nullopt;
  };
  if (which == "all" || which == "narayanan2021") {
    if (auto e = add(narayanan(rigs, dir / "narayanan2021_table1.csv"))) return *e;
  }
  if (which == "all" || which == "vtrain-multi") {
    if (auto e = add(vtrain(rigs, dir / "vtrain" / "ground_truth_multi.csv", true))) return *e;
  }
  if (which == "all" || which == "vtrain-single") {
    if (auto e = add(vtrain(rigs, dir / "vtrain" / "ground_truth_single.csv", false))) return *e;
  }
  return out;
}

}  // namespace scalescope::cli
