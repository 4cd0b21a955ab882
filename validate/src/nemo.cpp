// NeMo / Megatron-Bridge H100 rows: reading, model and plan of a row, and the predictions (nemo.hpp).
#include "scalescope/validate/nemo.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <thread>
#include <tuple>

#include "scalescope/calibrate/hardware.hpp"
#include "scalescope/models/framework_host.hpp"
#include "scalescope/models/predict.hpp"
#include "scalescope/validate/csv.hpp"
#include "scalescope/validate/rig.hpp"

namespace scalescope::validate {

namespace fs = std::filesystem;

Expected<std::vector<NemoRow>> load_nemo_rows(const fs::path& file) {
  auto table = read_csv(file);
  if (!table) return table.error();
  return catch_errors([&] {
    std::vector<NemoRow> rows;
    for (std::size_t i = 0; i < table->rows.size(); ++i) {
      const CsvRow r(*table, i);
      NemoRow n;
      n.source = r.text("source");
      n.model = r.text("model");
      n.task = r.text("task");
      n.precision = r.text("precision");
      n.status = r.text("status");
      n.gpus = r.positive_int("gpus");
      n.gbs = r.positive_int("gbs");
      n.mbs = r.positive_int("mbs");
      n.seq = r.positive_int("seq");
      n.fsdp = r.nonnegative_int("fsdp");
      n.tp = r.positive_int("tp");
      n.pp = r.positive_int("pp");
      n.cp = r.positive_int("cp");
      n.vp = r.positive_int("vp");
      n.ep = r.positive_int("ep");
      if (!r.text("tokens_per_s_per_gpu").empty()) n.tokens_per_s = r.positive_number("tokens_per_s_per_gpu");
      n.tflops = r.positive_number("model_tflops_per_gpu");
      rows.push_back(std::move(n));
    }
    return rows;
  });
}

double measured_tokens_per_s(const NemoRow& row, const models::ModelSpec& m) {
  if (row.tokens_per_s) return *row.tokens_per_s;
  // NeMo 1.0 llama2 formula per token (full attention): L h^2 (12 + 12 kv/heads + 18 f/h + 12 s/h + 6 V/(L h)).
  const double L = m.layers, h = m.hidden, s = row.seq;
  const double per_token = L * h * h *
                           (12.0 + 12.0 * m.kv_heads / m.heads + 18.0 * m.ffn_hidden / h + 12.0 * s / h +
                            6.0 * static_cast<double>(m.vocab) / (L * h));
  return row.tflops * 1e12 / per_token;
}

Expected<models::ModelSpec> nemo_model(const NemoRow& row, const fs::path& dir) {
  static const std::map<std::string, std::string, std::less<>> names = {
      {"GPT3-5B", "nemo-gpt3-5b"},       {"GPT3-20B", "nemo-gpt3-20b"},     {"GPT3-175B", "nemo-gpt3-175b"},
      {"LLAMA2-7B", "llama2-7b"},        {"LLAMA2-13B", "llama2-13b"},      {"LLAMA2-70B", "llama2-70b"},
      {"Nemotron-8B", "nemo-nemotron-8b"}, {"Nemotron-22B", "nemo-nemotron-22b"}, {"Nemotron-340B", "nemo-nemotron-340b"},
      {"LLAMA3-8B", "llama3-8b"},        {"LLAMA3_8B", "llama3-8b"},        {"LLAMA3-70B", "llama3-70b"},
      {"LLAMA3_70B", "llama3-70b"},      {"LLAMA3.1_405B", "llama3-405b"},  {"DeepSeekV3", "deepseek-v3"},
      {"Qwen3_30B_a3B", "qwen3-30b-a3b"}, {"Qwen3_235B_a22B", "qwen3-235b-a22b"}, {"GPT OSS 120B", "gpt-oss-120b"},
      {"Nemotron_3_Nano", "nemotron-3-nano-30b-a3b"}};
  auto it = names.find(row.model);
  if (it == names.end()) return input_error("h100_published.csv", row.model, "no model description for this name");
  const fs::path own = dir / "models" / (it->second + ".json");
  std::error_code ec;
  auto spec = fs::exists(own, ec) ? models::load_model(own) : models::load_model_by_name_or_path(it->second);
  if (!spec) return spec.error();
  spec->seq_len = row.seq;
  return spec;
}

models::CrossEntropyFusion nemo_cross_entropy_fusion(const NemoRow& r) {
  if (r.source.rfind("bridge", 0) == 0) return models::CrossEntropyFusion::te;
  static const std::set<std::string, std::less<>> native = {"LLAMA3-8B", "LLAMA3-70B", "Nemotron-8B", "Nemotron-22B"};
  return r.source == "nemo-24.07" && native.count(r.model) ? models::CrossEntropyFusion::native
                                                           : models::CrossEntropyFusion::none;
}

models::Plan nemo_plan(const NemoRow& r, const models::ModelSpec& m) {
  models::Plan p;
  p.tp = r.tp;
  p.pp = r.pp;
  p.cp = r.cp;
  p.dp = r.gpus / (r.tp * r.pp * r.cp);
  p.mbs = r.mbs;
  p.gbs = r.gbs;
  p.vpp = r.vp;
  if (r.vp > 1) p.schedule = models::Schedule::interleaved;
  p.sp = r.tp > 1;
  p.tp_comm_overlap = r.tp > 1;
  const bool bridge = r.source.rfind("bridge", 0) == 0;
  if (r.precision.rfind("fp8", 0) == 0) {
    p.precision = models::Precision::fp8;
    p.fp8_recipe = r.precision == "fp8-blockwise" ? models::Fp8Recipe::blockwise
                   : bridge                       ? models::Fp8Recipe::tensorwise
                                                  : models::Fp8Recipe::delayed;
  } else {
    p.precision = models::Precision::mixed;
  }
  p.grad_reduce_in_fp32 = !bridge && r.model != "Nemotron-340B";
  p.cross_entropy_fusion = nemo_cross_entropy_fusion(r);
  p.zero = r.fsdp > 0 ? 3 : 1;
  p.overlap = true;
  p.overlap_param_gather = p.zero == 1;
  const double elements = std::max(40e6, 1e6 * p.dp * p.cp);  // Megatron-Core's default bucket
  p.bucket_MB = elements * (p.grad_reduce_in_fp32 ? 4.0 : 2.0) / (1024.0 * 1024.0);
  if (m.is_moe()) {  // the recipes' expert settings (nemo.hpp)
    p.ep = r.ep;
    p.etp = 1;
    p.moe_a2a_overlap = r.model == "Qwen3_235B_a22B";
    // moe_flex_dispatcher_backend "hybridep" (DeepEP-style) in the DeepSeek-V3, Qwen3-30B and Nemotron 3 Nano H100
    // recipes.
    if (r.model == "DeepSeekV3" || r.model == "Qwen3_30B_a3B" || r.model == "Nemotron_3_Nano")
      p.moe_dispatcher = models::MoeDispatcher::flex;
    if (r.model == "DeepSeekV3" && r.pp * r.vp == 32) p.pp_layout = "Et|(tt|)*30L";
  }
  if (r.task == "sft" || r.task == "lora") {  // SQuAD v1.1 packed into the row's sequences (nemo.hpp)
    p.packed_doc_tokens = kSquadDocTokens;
    if (r.task == "lora") {
      p.lora_rank = 32;
      p.lora_modules = bridge ? models::kLoraQkv | models::kLoraProj | models::kLoraFc1 | models::kLoraFc2 : models::kLoraQkv;
    }
  }
  const int stages = r.pp * r.vp;
  if (p.pp_layout.empty() && stages > 1 && m.layers % stages != 0 && (m.layers + 2) % stages == 0) {
    // account_for_embedding/loss_in_pipeline_split (Llama 3.1 405B, Qwen3-235B): the embedding and the loss count
    // as a layer each: n = (layers + 2) / stages per virtual stage, E + (n-1) first, (n-1) + L last.
    const int n = (m.layers + 2) / stages;
    const auto run = [](int k) { return k == 1 ? std::string("t") : k == 2 ? std::string("tt") : "t*" + std::to_string(k); };
    p.pp_layout = "E" + run(n - 1) + "|(" + run(n) + "|)*" + std::to_string(stages - 2) + run(n - 1) + "L";
  }
  return p;
}

namespace {

void predict_point(NemoPoint& pt, const models::ModelSpec& spec, const Rig& rig, models::AttentionBackend attention,
                   const std::optional<models::FrameworkHostCost>& host = std::nullopt) {
  const models::Plan plan = nemo_plan(pt.row, spec);
  pt.plan = models::to_string(plan);
  models::PredictOptions o;
  o.host = host;
  o.fidelity = Fidelity::analytical;
  o.build.costs.flash_attention = true;
  o.build.costs.attention_backend = attention;
  o.build.costs.dropout = false;
  o.memory.flash_attention = true;
  o.memory.dropout = false;
  auto pred = models::predict(spec, plan, rig.cluster, rig.coll, rig.compute, o);
  if (!pred) {
    pt.skipped = pred.error().str();
    return;
  }
  pt.predicted = pred->tokens_per_s / plan.gpus();
  pt.memory_GiB = pred->memory.total().value / (1024.0 * 1024.0 * 1024.0);
  pt.fits_memory = pred->fits_memory;
  pt.breakdown = pred->sim.breakdown;
}

}  // namespace

namespace {

/// Median |e| and the signed e of largest magnitude.
std::pair<double, double> summary(std::vector<double> e) {
  double worst = 0;
  for (double x : e) {
    if (std::fabs(x) > std::fabs(worst)) worst = x;
  }
  for (double& x : e) x = std::fabs(x);
  std::sort(e.begin(), e.end());
  const std::size_t k = e.size();
  const double median = k == 0 ? 0.0 : k % 2 ? e[k / 2] : 0.5 * (e[k / 2 - 1] + e[k / 2]);
  return {median, worst};
}

/// Which prediction of a point predict_all fills.
enum class Slot { predicted, compared, with_host };

/// Predicts every point on `calibration`'s hardware models into `slot`, in parallel; for Slot::with_host with the
/// host cost of the row's kind (a row without one is left at 0).
void predict_all(NemoValidation& v, const std::vector<models::ModelSpec>& specs, const NemoOptions& opt,
                 const std::string& calibration, Slot slot,
                 const std::optional<models::FrameworkHostCost>& dense_host = std::nullopt,
                 const std::optional<models::FrameworkHostCost>& moe_host = std::nullopt) {
  const bool compare = slot == Slot::compared;
  std::map<int, std::unique_ptr<Rig>> rigs;  // by node count, built before the threads start
  std::vector<Rig*> rig_of;
  for (const NemoPoint& p : v.points) {
    const int nodes = (p.row.gpus + 7) / 8;
    if (!rigs.count(nodes)) {
      Cluster c = load_cluster_by_name_or_path(opt.cluster, ClusterOptions{nodes, {}}).take_or_throw();
      calib::HardwareModels hw = calib::load_hardware_models(calibration, c).take_or_throw();
      if (slot == Slot::with_host) {
        // the main prediction's hardware models: its sources are already recorded
      } else if (compare) {
        v.compare_source = hw.compute_source + "; collectives: " + hw.collective_source;
      } else {
        v.compute_source = hw.compute_source;
        v.collective_source = hw.collective_source;
      }
      rigs.emplace(nodes, std::make_unique<Rig>(std::move(c), std::move(hw.params), std::move(hw.compute)));
    }
    rig_of.push_back(rigs.at(nodes).get());
  }
  const std::size_t n = v.points.size(), threads = static_cast<std::size_t>(std::max(1, opt.threads));
  auto work = [&](std::size_t first) {
    for (std::size_t i = first; i < n; i += threads) {
      NemoPoint& p = v.points[i];
      if (slot == Slot::predicted) {
        predict_point(p, specs[i], *rig_of[i], opt.attention);
        continue;
      }
      const auto& host = p.row.moe() ? moe_host : dense_host;
      if (slot == Slot::with_host && !host) continue;
      NemoPoint other = p;
      predict_point(other, specs[i], *rig_of[i], opt.attention, host);
      (slot == Slot::compared ? p.compared : p.with_host) = other.skipped.empty() ? other.predicted : 0.0;
    }
  };
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(work, t);
  work(0);
  for (auto& t : pool) t.join();
}

}  // namespace

Expected<NemoValidation> run_nemo_validation(const fs::path& dir, const NemoOptions& opt) {
  auto rows = load_nemo_rows(dir / "h100_published.csv");
  if (!rows) return rows.error();
  return catch_errors([&] {
    NemoValidation v;
    std::vector<models::ModelSpec> specs;
    for (const NemoRow& r : *rows) {
      if (!r.checked()) {
        v.excluded.push_back(r);
        continue;
      }
      NemoPoint pt;
      pt.row = r;
      specs.push_back(nemo_model(r, dir).take_or_throw());
      pt.measured = measured_tokens_per_s(r, specs.back());
      v.points.push_back(std::move(pt));
    }
    predict_all(v, specs, opt, opt.calibration, Slot::predicted);
    if (!opt.compare_calibration.empty()) predict_all(v, specs, opt, opt.compare_calibration, Slot::compared);
    std::optional<models::FrameworkHostCost> dense_host, moe_host;
    for (auto [file, host, source] : {std::tuple{&opt.host_cost, &dense_host, &v.host_source},
                                      std::tuple{&opt.moe_host_cost, &moe_host, &v.moe_host_source}}) {
      if (file->empty()) continue;
      *host = models::load_framework_host_cost(*file).take_or_throw();
      *source = (*host)->framework + " on " + (*host)->host_machine;
    }
    if (dense_host || moe_host) predict_all(v, specs, opt, opt.calibration, Slot::with_host, dense_host, moe_host);
    std::vector<double> errors, compared, moe, host_dense, host_moe;
    for (const NemoPoint& p : v.points) {
      if (!p.skipped.empty()) continue;
      (p.row.moe() ? moe : errors).push_back(p.error());
      if (p.compared > 0 && p.row.dense()) compared.push_back(p.compared / p.measured - 1.0);
      if (p.with_host > 0) (p.row.moe() ? host_moe : host_dense).push_back(p.with_host / p.measured - 1.0);
    }
    std::tie(v.host_median_abs_error, v.host_worst_error) = summary(host_dense);
    std::tie(v.moe_host_median_abs_error, v.moe_host_worst_error) = summary(host_moe);
    std::tie(v.median_abs_error, v.worst_error) = summary(errors);
    std::tie(v.moe_median_abs_error, v.moe_worst_error) = summary(moe);
    v.moe_points = static_cast<int>(moe.size());
    std::tie(v.compare_median_abs_error, v.compare_worst_error) = summary(compared);
    if (!opt.deepseek_v3_calibration.empty()) v.deepseek_v3 = run_deepseek_v3_check(opt.deepseek_v3_calibration).take_or_throw();
    const auto moe_rows = std::count_if(v.points.begin(), v.points.end(), [](const NemoPoint& p) { return p.row.moe(); });
    std::fprintf(stderr, "scalescope validate nemo: %zu dense and %zu MoE rows predicted, %zu not checked\n",
                 v.points.size() - static_cast<std::size_t>(moe_rows), static_cast<std::size_t>(moe_rows),
                 v.excluded.size());
    return v;
  });
}

}  // namespace scalescope::validate
