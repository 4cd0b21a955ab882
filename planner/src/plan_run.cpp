// `scalescope plan` as a library call: request checks, loading, the search and the JSON report.
#include "scalescope/planner/plan_run.hpp"

#include <algorithm>

#include "scalescope/planner/report_json.hpp"

namespace scalescope::planner {

Expected<PlanRun> run_plan(const PlanRequest& o, SearchOptions so, const StackApply& stack) {
  if (o.model.empty()) return input_error("", "--model", "a model name or file is required");
  if (o.cluster.empty()) return input_error("", "--cluster", "a cluster name or file is required");
  if (o.gbs <= 0) return input_error("", "--gbs", "expected a positive global batch size");
  if (o.nodes && o.gpus) return input_error("", "--nodes", "give --nodes or --gpus, not both");
  if (o.top < 1) return input_error("", "--top", "expected a positive count");
  if (o.flow_top < 0) return input_error("", "--flow-top", "expected a count >= 0");
  PlanRun r;
  auto model = load_model_at_seq(o.model, o.seq);
  if (!model) return model.error();
  r.model = std::move(model).value();
  ClusterOptions co;
  co.nodes = o.nodes;
  co.gpus = o.gpus;
  if ((o.nodes && *o.nodes <= 0) || (o.gpus && *o.gpus <= 0))
    return input_error("", o.nodes ? "--nodes" : "--gpus", "expected a positive count");
  auto setup = load_setup(o.cluster, co, o.calibration);
  if (!setup) return setup.error();
  r.setup = std::move(setup).value();
  if (stack) stack(r.setup->compute);
  const EvalSetup& s = *r.setup;
  r.space.gpus = o.gpus.value_or(s.cluster.num_gpus());
  r.space.gbs = o.gbs;
  r.space.allow_cross_node_tp = o.cross_node_tp;
  r.space.max_mbs = o.max_mbs;
  r.space.max_vpp = o.max_vpp;
  r.space.max_cp = o.max_cp;
  r.space.max_ep = o.max_ep;
  r.space.precisions.clear();
  for (std::size_t at = 0; at <= o.precisions.size();) {
    const std::size_t comma = std::min(o.precisions.find(',', at), o.precisions.size());
    const std::string name = o.precisions.substr(at, comma - at);
    at = comma + 1;
    auto p = models::parse_plan("gbs=1,precision=" + name, "--precisions");
    if (!p) return input_error("", "--precisions", "expected mixed, bf16, fp16 or fp8 separated by commas, got '" + name + "'");
    if (p->fp8() && !s.cluster.gpu_spec().peak.fp8)
      return input_error("", "--precisions", "fp8 needs FP8 tensor cores; '" + s.cluster.gpu_spec().model + "' has none");
    r.space.precisions.push_back(p->precision);
  }
  if (o.base_plan) {  // the user's stack: its precision and flags; the layout is searched
    auto base = o.base_plan(r.model, r.space.gpus);
    if (!base) return base.error();
    r.space.base = *base;
    r.space.precisions = {base->precision};
    r.space.search_overlap = false;
  }
  if (!o.fine_tune.empty()) {  // the same fine-tuning job for every layout
    auto f = models::parse_plan("gbs=1," + o.fine_tune, "--fine-tune");
    if (!f) return f.error();
    for (std::size_t at = 0; at <= o.fine_tune.size();) {
      const std::size_t comma = std::min(o.fine_tune.find(',', at), o.fine_tune.size());
      const std::string item = o.fine_tune.substr(at, comma - at), key = item.substr(0, item.find('='));
      at = comma + 1;
      if (key != "lora_rank" && key != "lora_modules" && key != "packed_doc_tokens")
        return input_error("", "--fine-tune", "expected the keys lora_rank, lora_modules, packed_doc_tokens, got '" + key + "'");
    }
    r.space.base.lora_rank = f->lora_rank;
    r.space.base.lora_modules = f->lora_modules;
    r.space.base.packed_doc_tokens = f->packed_doc_tokens;
  }
  r.space.prune_bound = !o.exhaustive;
  if (!o.fix.empty()) {
    auto f = parse_plan_filter(o.fix);
    if (!f) return f.error();
    r.space.fix = *f;
  }
  so.top = o.top;
  so.flow_top = std::min(o.flow_top, o.top);
  r.flow_top = so.flow_top;
  auto res = search(r.model, s.cluster, s.collectives, s.compute, r.space, so);
  if (!res) return res.error();
  r.result = std::move(res).value();
  return r;
}

Json plan_json(const PlanRun& r) {
  const EvalSetup& s = *r.setup;
  Json plans = Json::array();
  for (std::size_t i = 0; i < r.result.ranked.size(); ++i) {
    Json j = ranked_json(r.result.ranked[i]);
    j["rank"] = i + 1;
    plans.push_back(j);
  }
  return Json{{"model", r.model.name}, {"seq_len", r.model.seq_len}, {"cluster", s.cluster.name()},
              {"gpus", r.space.gpus}, {"gbs", r.space.gbs},
              {"gpu_memory_GiB", sig(s.cluster.gpu_spec().memory.value / (1024.0 * 1024 * 1024), 4)},
              {"collectives", s.collective_source}, {"compute", s.compute_source},
              {"flow_confirmed", r.flow_top}, {"counts", counts_json(r.result.counts)}, {"plans", plans},
              {"explanations", r.result.explanations}};
}

}  // namespace scalescope::planner
