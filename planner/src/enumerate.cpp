// Plan enumeration and pruning by validity and memory (rules in search.hpp).
#include <charconv>

#include "scalescope/models/memory.hpp"
#include "scalescope/models/pipeline_layout.hpp"
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
         (!recompute || *recompute == p.recompute) && (!sp || *sp == p.sp) && (!cp || *cp == p.cp) &&
         (!precision || *precision == p.precision) && (!overlap_param_gather || *overlap_param_gather == p.overlap_param_gather) &&
         (!tp_comm_overlap || *tp_comm_overlap == p.tp_comm_overlap) && (!ep || *ep == p.ep);
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
      } else if (key == "sp" || key == "overlap_param_gather" || key == "tp_comm_overlap") {
        std::optional<bool>& b = key == "sp" ? f.sp : key == "tp_comm_overlap" ? f.tp_comm_overlap : f.overlap_param_gather;
        if (v == "1" || v == "true") b = true;
        else if (v == "0" || v == "false") b = false;
        else throw ErrorException(input_error(source, "key '" + key + "'", "expected true | false | 1 | 0, got '" + std::string(v) + "'"));
      } else if (key == "cp") {
        f.cp = parse_int(v, source, key);
      } else if (key == "ep") {
        f.ep = parse_int(v, source, key);
      } else if (key == "precision") {
        if (v == "mixed") f.precision = models::Precision::mixed;
        else if (v == "bf16") f.precision = models::Precision::bf16;
        else if (v == "fp16") f.precision = models::Precision::fp16;
        else if (v == "fp8") f.precision = models::Precision::fp8;
        else throw ErrorException(input_error(source, "key 'precision'", "expected mixed | bf16 | fp16 | fp8, got '" + std::string(v) + "'"));
      } else {
        throw ErrorException(input_error(source, "key '" + key + "'",
                                         "unknown key (expected tp pp dp cp ep zero mbs vpp schedule recompute sp precision "
                                         "overlap_param_gather tp_comm_overlap)"));
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
  const int seq = model.seq_len;
  for (int tp : divisors(space.gpus)) {
    for (int cp : divisors(space.gpus / tp)) {
      if (cp > space.max_cp) break;
      for (int pp : divisors(space.gpus / (tp * cp))) {
        ++c.layouts;
        if (tp > gpus_per_node && !space.allow_cross_node_tp) { ++c.layouts_tp_cross_node; continue; }
        if (model.heads % tp != 0 || model.kv_heads % tp != 0) { ++c.layouts_tp_heads; continue; }
        if (cp > 1 && (seq % (2 * cp) != 0 || seq / cp < space.min_cp_tokens)) { ++c.layouts_cp_seq; continue; }
        // An uneven pipeline when pp does not divide the layers: the nearest valid first / last stage split.
        auto split = [&](int vpp) -> std::optional<std::pair<int, int>> {
          if (model.layers % (pp * vpp) == 0) return std::pair{0, 0};
          const auto s = models::nearest_uneven_splits(model.layers, pp, vpp, 1);
          if (s.empty()) return std::nullopt;
          return s.front();
        };
        if (!split(1)) { ++c.layouts_pp_layers; continue; }
        if (model.layers % pp != 0) ++c.layouts_uneven;
        const int dp = space.gpus / (tp * cp * pp);
        if (space.gbs % dp != 0) { ++c.layouts_gbs_not_divisible; continue; }
        const int per_dp = space.gbs / dp;
        // Expert parallelism (MoE models): ep divides the experts and, with the base's etp, the stage's ranks.
        std::vector<int> eps{1};
        if (model.is_moe()) {
          eps.clear();
          const int etp = space.base.etp;
          for (int ep : divisors(model.moe.experts)) {
            if (space.max_ep > 0 && ep > space.max_ep) break;
            if ((tp * cp * dp) % (ep * etp) == 0) eps.push_back(ep);
          }
          if (eps.empty()) eps.push_back(1);  // validate() names the rule (etp not dividing the stage's ranks)
        }
        for (int ep : eps)
        // ZeRO shards over dp x cp, and (MoE) the experts over their data-parallel group, which exists when
        // ep * etp leaves replicas among the stage's ranks.
        for (int zero = 0; zero <= (dp * cp > 1 || (model.is_moe() && ep * space.base.etp < tp * cp * dp) ? 3 : 0); ++zero) {
          for (int mbs : divisors(per_dp)) {
            if (mbs > space.max_mbs) break;
            for (auto sched : kSchedules) {
              std::vector<int> vpps{1};
              if (sched == models::Schedule::interleaved) {
                vpps.clear();
                if (pp > 1)
                  for (int v = 2; v <= space.max_vpp; ++v)
                    if (split(v)) vpps.push_back(v);
              }
              for (int vpp : vpps) {
                const auto [first, last] = *split(vpp);
                for (int sp = 0; sp <= (tp > 1 ? 1 : 0); ++sp) {
                  for (models::Precision prec : space.precisions) {
                    const bool opg_choice = space.search_overlap && zero == 1 && dp * cp > 1;
                    const bool tco_choice = space.search_overlap && sp;
                    for (int opg = 0; opg <= (opg_choice ? 1 : 0); ++opg) {
                      for (int tco = 0; tco <= (tco_choice ? 1 : 0); ++tco) {
                        bool lighter_fits = false;  // a plan with less recompute fits (recompute loop ascends)
                        for (auto rc : kRecomputes) {
                          models::Plan p = space.base;
                          p.tp = tp; p.pp = pp; p.dp = dp; p.cp = cp; p.zero = zero; p.mbs = mbs; p.gbs = space.gbs;
                          p.ep = ep;
                          p.schedule = sched; p.vpp = vpp; p.recompute = rc; p.sp = sp != 0; p.precision = prec;
                          p.first_stage_layers = first;
                          p.last_stage_layers = last;
                          p.pp_layout.clear();
                          if (opg_choice) p.overlap_param_gather = opg != 0;
                          if (tco_choice) p.tp_comm_overlap = tco != 0;
                          if (zero != 1 || dp * cp == 1) p.overlap_param_gather = false;
                          if (!p.sp) p.tp_comm_overlap = false;
                          if (!p.fp8()) {
                            p.fp8_params = false;
                            p.fp8_recipe = models::Fp8Recipe::delayed;
                          }
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
        }
      }
    }
  }
  return e;
}

}  // namespace scalescope::planner
