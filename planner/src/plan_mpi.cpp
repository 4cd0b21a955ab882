// A plan search whose candidates are simulated across the ranks of an MPI job (see plan_mpi.hpp).
#include "scalescope/planner/plan_mpi.hpp"

#include <algorithm>
#include <map>

namespace scalescope::planner {

std::string encode_ranked(const RankedPlan& r) {
  Json parts = Json::array();
  for (const auto& p : r.breakdown.parts) parts.push_back(p.value);
  return Json{{"plan", models::to_string(r.plan)}, {"t", r.step_time_s}, {"tps", r.tokens_per_s}, {"mfu", r.mfu},
              {"mem", r.memory_GiB}, {"parts", parts}, {"total", r.breakdown.total.value}, {"lim", r.limiter},
              {"share", r.limiter_share}}
      .dump();
}

std::optional<RankedPlan> decode_ranked(const std::string& bytes) {
  const Json j = Json::parse(bytes, nullptr, false);
  if (!j.is_object()) return std::nullopt;  // "" : the plan failed
  auto plan = models::parse_plan(j.at("plan").get<std::string>());
  if (!plan) return std::nullopt;
  RankedPlan r;
  r.plan = *plan;
  r.step_time_s = j.at("t").get<double>();
  r.tokens_per_s = j.at("tps").get<double>();
  r.mfu = j.at("mfu").get<double>();
  r.memory_GiB = j.at("mem").get<double>();
  const auto& parts = j.at("parts");
  for (std::size_t i = 0; i < r.breakdown.parts.size() && i < parts.size(); ++i)
    r.breakdown.parts[i] = Seconds{parts[i].get<double>()};
  r.breakdown.total = Seconds{j.at("total").get<double>()};
  r.limiter = j.at("lim").get<std::string>();
  r.limiter_share = j.at("share").get<double>();
  return r;
}

Expected<PlanRun> run_plan_distributed(const PlanRequest& q, SearchOptions so, const StackApply& stack,
                                       Transport& transport) {
  if (transport.size() < 2) return run_plan(q, so, stack);
  // Every rank loads and checks the inputs the same way (a search that simulates nothing), then enumerates
  // the same candidates; bad input fails on every rank alike.
  PlanRequest load_only = q;
  load_only.flow_top = 0;
  SearchOptions none;
  none.threads = 1;
  none.evaluate_chunk = [](const std::vector<std::size_t>&, std::vector<std::optional<RankedPlan>>&) {};
  auto base = run_plan(load_only, none, stack);
  if (!base) return base.error();
  const EvalSetup& s = *base->setup;
  const Enumeration e = enumerate_plans(base->model, base->space, s.cluster.gpus_per_node(), s.cluster.gpu_spec().memory);
  const WorkFn work = [&](std::size_t idx) -> std::string {
    auto pred = evaluate(base->model, e.candidates[idx], s.cluster, s.compute, s.collectives, Fidelity::analytical);
    return pred ? encode_ranked(summarise(e.candidates[idx], *pred)) : std::string();
  };
  if (transport.rank() != 0) {
    serve(work, transport);
    base->result = {};
    return base;
  }
  WorkSplitter split(&transport, std::max(1, so.threads));
  so.evaluate_chunk = [&](const std::vector<std::size_t>& chunk, std::vector<std::optional<RankedPlan>>& out) {
    std::map<std::size_t, std::size_t> at;
    for (std::size_t j = 0; j < chunk.size(); ++j) at[chunk[j]] = j;
    split.run(chunk, work, [&](std::size_t idx, std::string bytes) { out[at[idx]] = decode_ranked(bytes); });
  };
  so.top = q.top;
  so.flow_top = std::min(q.flow_top, q.top);
  auto res = search(base->model, s.cluster, s.collectives, s.compute, base->space, so);
  split.finish();
  if (!res) return res.error();
  base->result = std::move(res).value();
  base->flow_top = so.flow_top;
  return base;
}

}  // namespace scalescope::planner
