// A100 validation: reads the published / measured rows, predicts each with the analytical simulator
// on an A100 system (datasheet compute model or parameters fitted on vTrain's single-node rows;
// superpod-a100 or vTrain's machine), and summarises.
#include "validate_a100.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <thread>

#include "scalescope/models/predict.hpp"
#include "validate_internal.hpp"

namespace scalescope::cli {

namespace fs = std::filesystem;

namespace {

using models::ModelSpec;
using models::Plan;

Expected<std::vector<std::vector<std::string>>> read_csv(const fs::path& file) {
  // Regular files only (a FIFO or device is refused without blocking), at most 64 MiB (the tables are a few KiB).
  auto text = read_input_file(file, std::uint64_t{64} << 20, "CSV table");
  if (!text) return text.error();
  std::istringstream in(std::move(text).value());
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

}  // namespace

ModelSpec gpt(const RowConfig& c) {
  ModelSpec s;
  s.name = "gpt-h" + std::to_string(c.hidden) + "-l" + std::to_string(c.layers);
  s.layers = c.layers;
  s.hidden = c.hidden;
  s.heads = c.heads;
  s.kv_heads = c.heads;
  s.ffn_hidden = 4 * c.hidden;
  s.ffn = models::FfnKind::gelu;
  s.norm = models::NormKind::layernorm;
  s.bias = true;
  s.vocab = c.vocab;
  s.tied_embeddings = true;
  s.seq_len = c.seq;
  s.positional = models::Positional::learned;
  return s;
}

/// Megatron-LM 2021 / Megatron-DeepSpeed as run in these measurements (assumptions listed in the report).
Plan megatron_plan(const RowConfig& c) {
  Plan p;
  p.tp = c.tp;
  p.pp = c.pp;
  p.dp = c.dp;
  p.mbs = c.mbs;
  p.gbs = c.gbs;
  p.schedule = models::Schedule::one_f_one_b;
  p.recompute = models::Recompute::full;
  p.precision = c.deepspeed_fp16 ? models::Precision::fp16 : models::Precision::mixed;
  p.bucket_MB = 1e9;  // one all-reduce of the whole contiguous gradient buffer ...
  p.overlap = false;  // ... after the backward (no bucketing, no overlap)
  return p;
}

namespace {

std::string plan_label(const RowConfig& c) {
  return "tp=" + std::to_string(c.tp) + ",pp=" + std::to_string(c.pp) + ",dp=" + std::to_string(c.dp) +
         ",mbs=" + std::to_string(c.mbs) + ",gbs=" + std::to_string(c.gbs);
}

}  // namespace

Expected<Rig*> Rigs::get(int gpus, bool vtrain) {
  const int nodes = (gpus + 7) / 8;
  const auto key = std::make_pair(vtrain, nodes);
  auto it = rigs_.find(key);
  if (it != rigs_.end()) return it->second.get();
  const bool own = vtrain && sys_.vtrain_machine;
  const std::string name = own ? (sys_.data_dir / "vtrain-cluster.json").string() : std::string("superpod-a100");
  auto c = load_cluster_by_name_or_path(name, ClusterOptions{nodes, {}});
  if (!c) return c.error();
  auto m = models::ComputeModel::datasheet(c->gpu_spec(), sys_.compute);
  if (!m) return m.error();
  auto rig = std::make_unique<Rig>(std::move(c).value(), own ? sys_.vtrain_collectives : datasheet_collective_params(),
                                   std::move(m).value());
  Rig* p = rig.get();
  rigs_.emplace(key, std::move(rig));
  return p;
}

ParsedSet parse_narayanan(const fs::path& file) {
  auto rows = read_csv(file).take_or_throw();
  ParsedSet out;
  out.set.name = "narayanan2021";
  std::size_t line = 1;
  for (const auto& r : rows) {
    ++line;
    RowConfig c;
    const double params = num(r, 0, file, line);
    c.heads = static_cast<int>(num(r, 1, file, line));
    c.hidden = static_cast<int>(num(r, 2, file, line));
    c.layers = static_cast<int>(num(r, 3, file, line));
    c.tp = static_cast<int>(num(r, 4, file, line));
    c.pp = static_cast<int>(num(r, 5, file, line));
    c.gpus = static_cast<int>(num(r, 6, file, line));
    c.gbs = static_cast<int>(num(r, 7, file, line));
    c.mbs = 1;
    c.dp = c.gpus / (c.tp * c.pp);
    c.vocab = 51200;
    c.seq = 2048;
    char name[64];
    std::snprintf(name, sizeof name, "%.1fB", params);
    ValidationRow row;
    row.group = "Table 1 (weak scaling)";
    row.label = std::string(name) + " " + std::to_string(c.gpus) + " GPUs " + plan_label(c);
    row.measured = num(r, 8, file, line);
    out.set.rows.push_back(std::move(row));
    out.configs.push_back(c);
  }
  return out;
}

ParsedSet parse_vtrain(const fs::path& file, bool multi) {
  auto rows = read_csv(file).take_or_throw();
  ParsedSet out;
  out.set.name = multi ? "vtrain-multi" : "vtrain-single";
  out.vtrain = true;
  const std::size_t off = multi ? 1 : 0;  // the multi-node file starts with the parameter count
  std::size_t line = 1;
  for (const auto& r : rows) {
    ++line;
    RowConfig c;
    c.gpus = static_cast<int>(num(r, off + 0, file, line));
    c.gbs = static_cast<int>(num(r, off + 1, file, line));
    c.mbs = static_cast<int>(num(r, off + 2, file, line));
    c.hidden = static_cast<int>(num(r, off + 3, file, line));
    c.heads = static_cast<int>(num(r, off + 4, file, line));
    c.layers = static_cast<int>(num(r, off + 5, file, line));
    c.seq = static_cast<int>(num(r, off + 6, file, line));
    c.tp = static_cast<int>(num(r, off + 7, file, line));
    c.dp = static_cast<int>(num(r, off + 8, file, line));
    c.pp = static_cast<int>(num(r, off + 9, file, line));
    c.vocab = 50257;
    c.deepspeed_fp16 = true;
    char group[128];
    if (multi) {
      std::snprintf(group, sizeof group, "%sB h=%d L=%d, %d GPUs", r[0].c_str(), c.hidden, c.layers, c.gpus);
    } else {
      std::snprintf(group, sizeof group, "h=%d a=%d L=%d s=%d, %d GPUs", c.hidden, c.heads, c.layers, c.seq, c.gpus);
    }
    ValidationRow row;
    row.group = group;
    row.label = plan_label(c);
    row.measured = num(r, off + 10, file, line);
    if (c.tp * c.pp * c.dp != c.gpus) row.skipped = "tp*pp*dp != GPUs";
    out.set.rows.push_back(std::move(row));
    out.configs.push_back(c);
  }
  return out;
}

namespace {

/// One row's prediction in the set's unit; fills fits_memory, breakdown or skipped.
double predict_row(Rigs& rigs, const RowConfig& c, bool vtrain, ValidationRow& row, Rig* rig) {
  models::PredictOptions o;
  o.fidelity = Fidelity::analytical;
  o.build.costs.flash_attention = false;  // Megatron 2021 fused softmax, scores in memory
  o.build.costs.dropout = true;
  o.build.per_layer_tasks = vtrain && rigs.system().per_layer_collectives;
  auto pred = models::predict(gpt(c), megatron_plan(c), rig->cluster, rig->coll, rig->compute, o);
  if (!pred) {
    row.skipped = pred.error().str();
    return 0;
  }
  row.fits_memory = pred->fits_memory;
  row.memory_GiB = pred->memory.total().value / (1024.0 * 1024.0 * 1024.0);
  using BP = BreakdownPart;
  const Breakdown& b = pred->sim.breakdown;
  row.breakdown = {1e3 * b.compute().value,          1e3 * b[BP::tp_comm].value,   1e3 * b[BP::pp_comm].value,
                   1e3 * b[BP::dp_comm].value,       1e3 * b[BP::optimizer].value, 1e3 * b[BP::bubble].value,
                   1e3 * (b[BP::other_compute].value + b[BP::sp_comm].value + b[BP::zero_comm].value +
                          b[BP::cp_comm].value + b[BP::ep_comm].value + b[BP::other_comm].value)};
  if (vtrain) return pred->step_time_s * 1e3;
  // Narayanan's eq. (3): F = 96 B s l h^2 (1 + s/(6h) + V/(16 l h)), counting the recompute forward.
  const double B = c.gbs, s = c.seq, l = c.layers, h = c.hidden, V = static_cast<double>(c.vocab);
  const double F = 96.0 * B * s * l * h * h * (1.0 + s / (6.0 * h) + V / (16.0 * l * h));
  return F / (pred->step_time_s * c.gpus) / 1e12;
}

}  // namespace

std::vector<double> predict_set(const ParsedSet& parsed, Rigs& rigs, std::vector<ValidationRow>& rows, int threads) {
  std::vector<double> out(parsed.configs.size(), 0.0);
  std::vector<Rig*> rig_of(parsed.configs.size(), nullptr);
  for (std::size_t i = 0; i < parsed.configs.size(); ++i) {  // build the clusters first (Rigs is not thread-safe)
    if (!rows[i].skipped.empty()) continue;
    auto rig = rigs.get(parsed.configs[i].gpus, parsed.vtrain);
    if (!rig) {
      rows[i].skipped = rig.error().str();
      continue;
    }
    rig_of[i] = *rig;
  }
  auto work = [&](std::size_t first, std::size_t step) {
    for (std::size_t i = first; i < parsed.configs.size(); i += step) {
      if (rig_of[i] && rows[i].skipped.empty()) out[i] = predict_row(rigs, parsed.configs[i], parsed.vtrain, rows[i], rig_of[i]);
    }
  };
  const int n = std::max(1, threads);
  std::vector<std::thread> pool;
  for (int t = 1; t < n; ++t) pool.emplace_back(work, static_cast<std::size_t>(t), static_cast<std::size_t>(n));
  work(0, static_cast<std::size_t>(n));
  for (auto& t : pool) t.join();
  return out;
}

Expected<SystemSpec> make_system(const fs::path& dir, const A100Options& options, bool fitted) {
  SystemSpec s;
  s.data_dir = dir;
  s.vtrain_machine = options.vtrain_system;
  s.per_layer_collectives = options.vtrain_system;
  if (options.vtrain_system) {
    auto p = vtrain_collective_params(dir, &s.collectives_description);
    if (!p) return p.error();
    s.vtrain_collectives = std::move(p).value();
  }
  if (fitted && options.fit) {
    s.compute.gemm_efficiency = options.fit->gemm_efficiency;
    s.compute.elementwise_efficiency = options.fit->elementwise_efficiency;
    s.compute.launch_overhead = microseconds(options.fit->launch_overhead_us);
  }
  return s;
}

Expected<std::vector<ValidationSet>> run_a100_validation(const fs::path& dir, const std::string& which,
                                                         const A100Options& options) {
  if (which != "all" && which != "narayanan2021" && which != "vtrain-multi" && which != "vtrain-single") {
    return input_error("", "--set", "expected all | narayanan2021 | vtrain-multi | vtrain-single, got '" + which + "'");
  }
  return catch_errors([&] {
    const SystemSpec base = make_system(dir, options, false).take_or_throw();
    Rigs rigs_base(base);
    std::optional<Rigs> rigs_fit;
    if (options.fit) rigs_fit.emplace(make_system(dir, options, true).take_or_throw());
    std::vector<ValidationSet> out;
    auto run = [&](ParsedSet parsed) {
      ValidationSet& set = parsed.set;
      describe_set(set, base, options);
      const auto unfitted = predict_set(parsed, rigs_base, set.rows, 2);
      if (rigs_fit) {
        const auto fitted = predict_set(parsed, *rigs_fit, set.rows, 2);
        for (std::size_t i = 0; i < set.rows.size(); ++i) {
          set.rows[i].predicted = fitted[i];
          set.rows[i].unfitted = unfitted[i];
        }
        set.has_fit = true;
      } else {
        for (std::size_t i = 0; i < set.rows.size(); ++i) set.rows[i].predicted = unfitted[i];
      }
      std::fprintf(stderr, "scalescope validate: %s: %zu rows\n", set.name.c_str(), set.rows.size());
      out.push_back(std::move(set));
    };
    if (which == "all" || which == "narayanan2021") run(parse_narayanan(dir / "narayanan2021_table1.csv"));
    if (which == "all" || which == "vtrain-multi") run(parse_vtrain(dir / "vtrain" / "ground_truth_multi.csv", true));
    if (which == "all" || which == "vtrain-single") run(parse_vtrain(dir / "vtrain" / "ground_truth_single.csv", false));
    return out;
  });
}

}  // namespace scalescope::cli
