// The DeepSeek-V3 technical report's training cost against scalescope's prediction of its run (nemo.hpp).
#include <algorithm>

#include "scalescope/calibrate/hardware.hpp"
#include "scalescope/models/predict.hpp"
#include "scalescope/validate/nemo.hpp"
#include "scalescope/validate/rig.hpp"

namespace scalescope::validate {

models::Plan deepseek_v3_report_plan() {
  models::Plan p;
  p.tp = 1;
  p.pp = 16;
  p.dp = 128;
  p.ep = 64;
  p.etp = 1;
  p.zero = 1;  // ZeRO-1 data parallelism (report 3.2)
  p.overlap = true;
  p.overlap_param_gather = true;
  p.mbs = 1;
  p.gbs = 15360;  // the batch after the ramp (report 4.2: 3,072 -> 15,360 sequences over the first 469B tokens)
  p.schedule = models::Schedule::one_f_one_b;
  // 61 layers on 16 stages with the embedding and the loss counted as layers (DualPipe places the output head and
  // the MTP module with the last stage).
  p.pp_layout = "Et*3|(t*4|)*14t*2L";
  p.precision = models::Precision::fp8;
  p.fp8_recipe = models::Fp8Recipe::blockwise;  // 1x128 activation tiles, 128x128 weight blocks (report 3.3)
  p.moe_a2a_overlap = true;                     // DualPipe hides the all-to-all under computation (report 3.2.1)
  // DeepEP-style dispatch: a token crosses IB once per destination node, at most 4 nodes (report 3.2.2).
  p.moe_dispatcher = models::MoeDispatcher::flex;
  return p;
}

Expected<DeepSeekV3Check> run_deepseek_v3_check(const std::string& calibration) {
  return catch_errors([&] {
    DeepSeekV3Check c;
    c.plan = models::to_string(deepseek_v3_report_plan());
    const models::ModelSpec spec = models::load_model_by_name_or_path("deepseek-v3").take_or_throw();
    Cluster cluster = load_cluster_by_name_or_path("h800-ndr-multiplane", ClusterOptions{256, {}}).take_or_throw();
    calib::HardwareModels hw = calib::load_hardware_models(calibration, cluster).take_or_throw();
    c.compute_source = hw.compute_source;
    const Rig rig(std::move(cluster), std::move(hw.params), std::move(hw.compute));
    models::PredictOptions o;
    o.build.costs.flash_attention = true;
    o.build.costs.dropout = false;
    o.memory.flash_attention = true;
    o.memory.dropout = false;
    auto pred = models::predict(spec, deepseek_v3_report_plan(), rig.cluster, rig.coll, rig.compute, o);
    if (!pred) {
      c.skipped = pred.error().str();
      return c;
    }
    c.predicted = pred->tokens_per_s / rig.cluster.num_gpus();
    c.memory_GiB = pred->memory.total().value / (1024.0 * 1024.0 * 1024.0);
    c.breakdown = pred->sim.breakdown;
    return c;
  });
}

}  // namespace scalescope::validate
