// Pipeline schedules: the order of forward and backward passes on one stage (GPipe, 1F1B, interleaved).
#include <algorithm>
#include <cassert>

#include "scalescope/models/builder.hpp"

namespace scalescope::models {

int plan_rank(const Plan& plan, int stage, int dp_rank, int tp_rank) {
  return tp_rank + plan.tp * (dp_rank + plan.dp * stage);
}

std::vector<ScheduleStep> pipeline_order(Schedule schedule, int pp, int vpp, int stage, int m) {
  assert(pp > 0 && vpp > 0 && stage >= 0 && stage < pp && m > 0 && "pipeline_order: bad arguments");
  std::vector<ScheduleStep> out;
  switch (schedule) {
    case Schedule::gpipe:
      for (int i = 0; i < m; ++i) out.push_back({true, 0, i});
      for (int i = 0; i < m; ++i) out.push_back({false, 0, i});
      return out;
    case Schedule::one_f_one_b: {
      const int warmup = std::min(pp - stage - 1, m);
      const int remaining = m - warmup;
      for (int i = 0; i < warmup; ++i) out.push_back({true, 0, i});
      for (int i = 0; i < remaining; ++i) {
        out.push_back({true, 0, warmup + i});
        out.push_back({false, 0, i});
      }
      for (int i = remaining; i < m; ++i) out.push_back({false, 0, i});
      return out;
    }
    case Schedule::interleaved: {
      const int total = m * vpp;
      const int group = pp * vpp;
      auto step = [&](int k, bool forward) {
        int chunk = (k % group) / pp;
        if (!forward) chunk = vpp - chunk - 1;
        return ScheduleStep{forward, chunk, (k / group) * pp + k % pp};
      };
      int warmup = m == pp ? total : std::min((pp - stage - 1) * 2 + (vpp - 1) * pp, total);
      const int remaining = total - warmup;
      for (int k = 0; k < warmup; ++k) out.push_back(step(k, true));
      for (int i = 0; i < remaining; ++i) {
        out.push_back(step(warmup + i, true));
        out.push_back(step(i, false));
      }
      for (int k = remaining; k < total; ++k) out.push_back(step(k, false));
      return out;
    }
  }
  return out;
}

}  // namespace scalescope::models
