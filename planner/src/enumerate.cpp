// Plan enumeration and pruning by validity and memory (rules in search.hpp).
#include <charconv>

#include "scalescope/models/memory.hpp"
#include "scalescope/planner/search.hpp"

namespace scalescope::planner {

namespace {

std::vector<int> divisors(int n) {
  std::vector<int> out;
  for (int d = 1; d <= n; ++d)
    if (n % d == 0) out.push_back(d);
  return out;
}

int parse_int(std::string_view v, const std::string& source, const std::string& key) {
  int x = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
  if (ec != std::errc{} || p != v.data() + v.size() || x < 0)
    throw ErrorException(input_error(source, "key '" + key + "'", "expected a non-negative integer, got '" + std::string(v) + "'"));
  return x;
}

}  // namespace

bool PlanFilter::accepts(const models::Plan& p) const {
  return (!tp || *tp == p.tp) && (!pp || *pp == p.pp) && (!dp || *dp == p.dp) && (!zero || *zero == p.zero) &&
         (!mbs || *mbs == p.mbs) && (!vpp || *vpp == p.vpp) && (!schedule || *schedule == p.schedule) &&
         (!recompute || *recompute == p.recompute) && (!sp || *sp == p.sp);
}

Expected<PlanFilter> parse_plan_filter(std::string_view text, const std::string& source) {
  return catch_errors([&] {
    PlanFilter f;
    while (!text.empty()) {
      const auto comma = text.find(',');
      const std::string_view item = text.substr(0, comma);
      text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
      if (item.empty()) continue;
      const auto eq = item.find('=');
      if (eq == std::string_view::npos)
        throw ErrorException(input_error(source, "", "expected key=value, got '" + std::string(item) + "'"));
      const std::string key(item.substr(0, eq));
      const std::string_view v = item.substr(eq + 1);
      if (key == "tp") f.tp = parse_int(v, source, key);
      else if (key == "pp") f.pp = parse_int(v, source, key);
      else if (key == "dp") f.dp = parse_int(v, source, key);
      else if (key == "zero") f.zero = parse_int(v, source, key);
      else if (key == "mbs") f.mbs = parse_int(v, source, key);
      else if (key == "vpp") f.vpp = parse_int(v, source, key);
      else if (key == "schedule") {
        if (v == "gpipe") f.schedule = models::Schedule::gpipe;
        else if (v == "1f1b") f.schedule = models::Schedule::one_f_one_b;
        else if (v == "interleaved") f.schedule = models::Schedule::interleaved;
        else throw ErrorException(input_error(source, "key 'schedule'", "expected gpipe | 1f1b | interleaved, got '" + std::string(v) + "'"));
      } else if (key == "recompute") {
        if (v == "none") f.recompute = models::Recompute::none;
        else if (v == "selective") f.recompute = models::Recompute::selective;
        else if (v == "full") f.recompute = models::Recompute::full;
        else throw ErrorException(input_error(source, "key 'recompute'", "expected none | selective | full, got '" + std::string(v) + "'"));
      } else if (key == "sp") {
        if (v == "1" || v == "true") f.sp = true;
        else if (v == "0" || v == "false") f.sp = false;
        else throw ErrorException(input_error(source, "key 'sp'", "expected true | false | 1 | 0, got '" + std::string(v) + "'"));
      } else {
        throw ErrorException(input_error(source, "key '" + key + "'",
                                         "unknown key (expected tp pp dp zero mbs vpp schedule recompute sp)"));
      }
    }
    return f;
  });
}

Enumeration enumerate_plans(const models::ModelSpec& model, const SearchSpace& space, int gpus_per_node,
                            Bytes gpu_memory) {
  assert(space.gpus > 0 && space.gbs > 0 && "enumerate_plans: gpus and gbs must be positive");
  Enumeration e;
  PruneCounts& c = e.counts;
  models::MemoryOptions mo;
  mo.flash_attention = true;  // the evaluation's CostOptions defaults (flash attention, no dropout)
  mo.dropout = false;
  const models::Schedule kSchedules[] = {models::Schedule::gpipe, models::Schedule::one_f_one_b,
                                          models::Schedule::interleaved};
  const models::Recompute kRecomputes[] = {models::Recompute::none, models::Recompute::selective,
                                            models::Recompute::full};
  for (int tp : divisors(space.gpus)) {
    for (int pp : divisors(space.gpus / tp)) {
      ++c.layouts;
      if (tp > gpus_per_node && !space.allow_cross_node_tp) { ++c.layouts_tp_cross_node; continue; }
      if (model.heads % tp != 0 || model.kv_heads % tp != 0) { ++c.layouts_tp_heads; continue; }
      if (model.layers % pp != 0) { ++c.layouts_pp_layers; continue; }
      const int dp = space.gpus / (tp * pp);
      if (space.gbs % dp != 0) { ++c.layouts_gbs_not_divisible; continue; }
      const int per_dp = space.gbs / dp;
      for (int zero = 0; zero <= (dp > 1 ? 3 : 0); ++zero) {
        for (int mbs : divisors(per_dp)) {
          if (mbs > space.max_mbs) break;
          for (auto sched : kSchedules) {
            std::vector<int> vpps{1};
            if (sched == models::Schedule::interleaved) {
              vpps.clear();
              if (pp > 1)
                for (int v : divisors(model.layers / pp))
                  if (v > 1 && v <= space.max_vpp) vpps.push_back(v);
            }
            for (int vpp : vpps) {
              for (int sp = 0; sp <= (tp > 1 ? 1 : 0); ++sp) {
                bool lighter_fits = false;  // a plan with less recompute fits (recompute loop ascends)
                for (auto rc : kRecomputes) {
                  models::Plan p;
                  p.tp = tp; p.pp = pp; p.dp = dp; p.zero = zero; p.mbs = mbs; p.gbs = space.gbs;
                  p.schedule = sched; p.vpp = vpp; p.recompute = rc; p.sp = sp != 0;
                  ++c.plans;
                  if (!space.fix.accepts(p)) { ++c.fixed_out; continue; }
                  auto ok = models::validate(p, model, space.gpus);
                  if (!ok) {
                    ++c.invalid;
                    ++c.invalid_by_rule[ok.error().path.empty() ? ok.error().message : ok.error().path];
                    continue;
                  }
                  const Bytes mem = models::peak_memory(model, p, mo).total();
                  if (!e.min_memory || mem < *e.min_memory) { e.min_memory = mem; e.min_memory_plan = p; }
                  if (mem > gpu_memory) { ++c.out_of_memory; continue; }
                  if (lighter_fits && space.prune_dominated) { ++c.dominated; continue; }
                  lighter_fits = true;
                  e.candidates.push_back(p);
                }
              }
            }
          }
        }
      }
    }
  }
  return e;
}

}  // namespace scalescope::planner
