// The structure of the traced step (torch_trace.hpp, steps 1-3): its window, each kernel's launch, ops, phase,
// and the layer it belongs to.
#include <algorithm>
#include <string>
#include <unordered_map>

#include "torch_trace_impl.hpp"

namespace scalescope::calib::trace {

namespace {

bool starts_with(const std::string& s, std::string_view p) { return s.size() >= p.size() && s.compare(0, p.size(), p) == 0; }

bool contains_ci(const std::string& s, std::string_view needle) {
  auto it = std::search(s.begin(), s.end(), needle.begin(), needle.end(),
                        [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; });
  return it != s.end();
}

/// Deepest nesting of CPU ops kept open around a launch (PyTorch nests a few dozen: module, aten op, its callees).
constexpr std::size_t kMaxOpDepth = 4096;
/// Comparisons the layer-period search may make (~1 s): a real trace needs period x forward kernels, far less.
constexpr std::uint64_t kMaxPeriodWork = 2'000'000'000;

/// Innermost and outermost op of each launch, per thread: ops sorted by (start, longer first) form a forest; a
/// sweep over launches sorted by time keeps the stack of ops open at that time. Ops that overlap without nesting
/// (not a profiler's) could grow the stack without bound: it is capped at kMaxOpDepth (false).
bool enclosing_ops(const Events& ev, std::vector<Kernel>& kernels) {
  std::unordered_map<std::int64_t, std::vector<std::size_t>> ops_of;
  for (std::size_t i = 0; i < ev.ops.size(); ++i) ops_of[ev.ops[i].tid].push_back(i);
  std::unordered_map<std::int64_t, std::vector<std::size_t>> kernels_of;
  for (std::size_t k = 0; k < kernels.size(); ++k) kernels_of[ev.launches[kernels[k].launch].tid].push_back(k);
  for (auto& [tid, ks] : kernels_of) {
    auto& ops = ops_of[tid];
    std::sort(ops.begin(), ops.end(), [&](std::size_t a, std::size_t b) {
      const CpuOp &x = ev.ops[a], &y = ev.ops[b];
      return x.ts != y.ts ? x.ts < y.ts : x.dur > y.dur;
    });
    std::sort(ks.begin(), ks.end(), [&](std::size_t a, std::size_t b) {
      return ev.launches[kernels[a].launch].ts < ev.launches[kernels[b].launch].ts;
    });
    std::vector<std::size_t> open;
    std::size_t next = 0;
    for (std::size_t k : ks) {
      const double t = ev.launches[kernels[k].launch].ts;
      while (next < ops.size() && ev.ops[ops[next]].ts <= t) {
        const CpuOp& o = ev.ops[ops[next]];
        while (!open.empty() && ev.ops[open.back()].ts + ev.ops[open.back()].dur < o.ts) open.pop_back();
        if (open.size() >= kMaxOpDepth) return false;
        open.push_back(ops[next++]);
      }
      while (!open.empty() && ev.ops[open.back()].ts + ev.ops[open.back()].dur < t) open.pop_back();
      // `open` may hold an op that ended before t below one that did not; keep only the chain around t.
      std::int64_t inner = -1, outer = -1;
      for (std::size_t o : open) {
        if (ev.ops[o].ts + ev.ops[o].dur >= t) {
          if (outer < 0) outer = static_cast<std::int64_t>(o);
          inner = static_cast<std::int64_t>(o);
        }
      }
      kernels[k].inner = inner;
      kernels[k].outer = outer;
    }
  }
  return true;
}

/// Smallest period P and offset o such that forward kernel names repeat L times from o; the block must hold an
/// attention kernel when the forward has one. Returns {P, o}, {0, 0} when there is none, or {-1, 0} when the search
/// would take more than kMaxPeriodWork comparisons.
std::pair<int, int> find_period(const std::vector<std::uint32_t>& names, const std::vector<bool>& attention, int L,
                                int min_period = 1) {
  const int n = static_cast<int>(names.size());
  const bool any_attention = std::find(attention.begin(), attention.end(), true) != attention.end();
  std::uint64_t work = 0;
  for (int p = std::max(1, min_period); static_cast<std::int64_t>(p) * L <= n; ++p) {
    const int need = (L - 1) * p;  // names[i] == names[i + p] for every i of the first L - 1 blocks
    int run = 0;
    if ((work += static_cast<std::uint64_t>(n)) > kMaxPeriodWork) return {-1, 0};
    for (int i = 0; i + p < n; ++i) {
      run = names[static_cast<std::size_t>(i)] == names[static_cast<std::size_t>(i + p)] ? run + 1 : 0;
      if (run < need) continue;
      const int o = i - need + 1;
      if (o + L * p > n) break;
      const auto block = attention.begin() + o;
      if (any_attention && std::none_of(block, block + p, [](bool a) { return a; })) continue;
      return {p, o};
    }
  }
  return {0, 0};
}

/// A kernel's family: its function name without template arguments, PyTorch's elementwise launchers
/// (vectorized_elementwise_kernel<4>, <2>, unrolled_elementwise_kernel, elementwise_kernel) as one. PyTorch picks the
/// launcher by the tensors' alignment, which data-dependent sizes (an MoE layer's tokens per expert) change from
/// layer to layer, so the same layer code runs differently named kernels.
std::string kernel_family(std::string k) {
  if (k.rfind("void ", 0) == 0) k = k.substr(5);
  const std::size_t cut = k.find_first_of("<(");
  if (cut != std::string::npos) k = k.substr(0, cut);
  if (k.find("elementwise_kernel") != std::string::npos) return "elementwise_kernel";
  return k;
}

}  // namespace

bool in_optimizer(const Step& st, double t) {
  const auto& w = st.optimizer_windows;  // sorted, disjoint (analyse_step)
  auto it = std::upper_bound(w.begin(), w.end(), t, [](double x, const auto& win) { return x < win.first; });
  return it != w.begin() && t <= std::prev(it)->second;
}

Expected<Step> analyse_step(const Events& ev, int layers, const std::string& file, TraceImportSummary& sum) {
  Step st;
  st.layers = layers;
  if (layers < 2) return input_error(file, "--layers", "the trace must run at least 2 transformer layers");
  // 1. The step.
  const Annotation* step = nullptr;
  int optimizer_steps = 0;
  for (const auto& a : ev.annotations) {
    const std::string& n = ev.name(a.name);
    if (starts_with(n, "ProfilerStep#") && (!step || a.ts > step->ts)) step = &a;
    if (starts_with(n, "Optimizer.step#")) ++optimizer_steps;
  }
  if (step) {
    st.t0 = step->ts;
    st.t1 = step->ts + step->dur;
    st.main_tid = step->tid;
  } else {
    if (optimizer_steps > 1) {
      return input_error(file, "", std::to_string(optimizer_steps) + " optimizer steps and no ProfilerStep# marker: "
                         "cannot tell which step to import; record with torch.profiler.schedule(wait=1, warmup=1, "
                         "active=1) and call prof.step() after every step");
    }
    if (ev.ops.empty()) return input_error(file, "", "no CPU ops (cat cpu_op): record with activities=[CPU, CUDA]");
    st.t0 = ev.ops.front().ts;
    st.t1 = st.t0;
    std::unordered_map<std::int64_t, std::size_t> per_tid;
    for (const auto& o : ev.ops) {
      st.t0 = std::min(st.t0, o.ts);
      st.t1 = std::max(st.t1, o.ts + o.dur);
      ++per_tid[o.tid];
    }
    st.main_tid = std::max_element(per_tid.begin(), per_tid.end(), [](auto& a, auto& b) { return a.second < b.second; })->first;
  }
  for (const auto& a : ev.annotations) {
    const std::string& n = ev.name(a.name);
    if ((starts_with(n, "Optimizer.step#") || starts_with(n, "Optimizer.zero_grad#")) && a.ts >= st.t0 && a.ts <= st.t1)
      st.optimizer_windows.emplace_back(a.ts, a.ts + a.dur);
  }
  // Sorted and merged, so that a time is looked up in O(log windows) (in_optimizer()).
  std::sort(st.optimizer_windows.begin(), st.optimizer_windows.end());
  std::vector<std::pair<double, double>> merged;
  for (const auto& w : st.optimizer_windows) {
    if (!merged.empty() && w.first <= merged.back().second) merged.back().second = std::max(merged.back().second, w.second);
    else merged.push_back(w);
  }
  st.optimizer_windows = std::move(merged);
  sum.step_cpu_s = (st.t1 - st.t0) * 1e-6;

  // 2. Kernels launched in the step.
  std::unordered_map<std::int64_t, std::size_t> by_corr;
  for (std::size_t i = 0; i < ev.gpu.size(); ++i)
    if (ev.gpu[i].correlation >= 0) by_corr.emplace(ev.gpu[i].correlation, i);
  for (std::size_t l = 0; l < ev.launches.size(); ++l) {
    const Launch& la = ev.launches[l];
    if (la.ts < st.t0 || la.ts > st.t1) continue;
    auto it = by_corr.find(la.correlation);
    if (it == by_corr.end()) continue;
    Kernel k;
    k.gpu = it->second;
    k.launch = l;
    st.kernels.push_back(k);
  }
  if (st.kernels.empty()) {
    return input_error(file, "", "no GPU kernels launched inside the step: record with activities=[CPU, CUDA] on a GPU");
  }
  std::sort(st.kernels.begin(), st.kernels.end(),
            [&](const Kernel& a, const Kernel& b) { return ev.launches[a.launch].ts < ev.launches[b.launch].ts; });
  if (!enclosing_ops(ev, st.kernels)) {
    return input_error(file, "", "CPU ops overlap without nesting, more than " + std::to_string(kMaxOpDepth) +
                                     " levels deep: not a PyTorch profiler trace");
  }
  sum.kernels = st.kernels.size();

  // Phases.
  for (Kernel& k : st.kernels) {
    const double t = ev.launches[k.launch].ts;
    const std::string& kname = ev.name(ev.gpu[k.gpu].name);
    const bool in_opt = in_optimizer(st, t);
    const std::string outer = k.outer >= 0 ? ev.name(ev.ops[static_cast<std::size_t>(k.outer)].name) : "";
    if (contains_ci(kname, "nccl")) k.phase = Phase::comm;
    else if (in_opt) k.phase = Phase::optimizer, k.segment = -2;
    else if (starts_with(outer, "autograd::engine::evaluate_function") || ev.launches[k.launch].tid != st.main_tid)
      k.phase = Phase::backward;
    else k.phase = Phase::forward;
  }

  // 3. Layers of the forward.
  std::vector<std::size_t> fwd;
  for (std::size_t i = 0; i < st.kernels.size(); ++i)
    if (st.kernels[i].phase == Phase::forward) fwd.push_back(i);
  std::vector<std::uint32_t> names;
  std::vector<bool> attention;
  for (std::size_t i : fwd) {
    const Kernel& k = st.kernels[i];
    names.push_back(ev.gpu[k.gpu].name);
    const std::string inner = k.inner >= 0 ? ev.name(ev.ops[static_cast<std::size_t>(k.inner)].name) : "";
    attention.push_back(inner.find("attention") != std::string::npos);
  }
  std::pair<int, int> found = find_period(names, attention, layers);
  if (found.first == 0) {
    // No block of identical kernel names: look for one of identical kernel families (kernel_family), whose L
    // copies hold at least half the forward's kernels (families repeat in short runs that are no layer).
    std::unordered_map<std::string, std::uint32_t> family_id;
    for (std::uint32_t& n : names)
      n = family_id.try_emplace(kernel_family(ev.name(n)), static_cast<std::uint32_t>(family_id.size())).first->second;
    found = find_period(names, attention, layers, static_cast<int>((names.size() + 2 * layers - 1) / (2 * layers)));
    if (found.first > 0)
      sum.notes.push_back("the layers' kernels repeat by family, not by name (PyTorch's elementwise launchers differ "
                          "with the tensors' alignment from layer to layer)");
  }
  const int period = found.first, offset = found.second;  // not a structured binding: the lambdas below capture them
  if (period < 0) {
    return input_error(file, "", "the forward's " + std::to_string(fwd.size()) + " kernels are too many to search for " +
                                     std::to_string(layers) + " repeated layer blocks (more than " +
                                     std::to_string(kMaxPeriodWork) + " comparisons): trace one step of one GPU");
  }
  if (period == 0) {
    return input_error(file, "--layers", "the forward's " + std::to_string(fwd.size()) + " kernels hold no block "
                       "repeated " + std::to_string(layers) + " times: is the model right (--model) and did the "
                       "program run " + std::to_string(layers) + " layers (--layers)?");
  }
  // One more copy of the block before or after the L found means the program ran more layers than given.
  auto copy_at = [&](int start) {
    if (start < 0 || start + period > static_cast<int>(names.size())) return false;
    for (int i = 0; i < period; ++i)
      if (names[static_cast<std::size_t>(start + i)] != names[static_cast<std::size_t>(offset + i)]) return false;
    return true;
  };
  if (copy_at(offset - period) || copy_at(offset + layers * period)) {
    return input_error(file, "--layers", "the forward repeats its " + std::to_string(period) + "-kernel layer block "
                       "more than " + std::to_string(layers) + " times: the program ran more layers than the model "
                       "(--model) or --layers says");
  }
  st.period = period;
  sum.layer_period = period;
  for (std::size_t j = 0; j < fwd.size(); ++j) {
    const int pos = static_cast<int>(j) - offset;
    st.kernels[fwd[j]].segment = pos < 0 ? -1 : std::min(pos / period, layers);
  }
  for (int l = 0; l <= layers; ++l) {
    const std::size_t j = static_cast<std::size_t>(offset + l * period);
    st.layer_start_ts.push_back(j < fwd.size() ? ev.launches[st.kernels[fwd[j]].launch].ts : st.t1);
  }
  // The host's waits for the GPU on the main thread, and the first in each layer's forward.
  for (const Launch& l : ev.launches) {
    if (l.tid != st.main_tid || l.ts < st.t0 || l.ts > st.t1) continue;
    const std::string& n = ev.name(l.name);
    if (n == "cudaStreamSynchronize" || n == "cudaEventSynchronize" || n == "cudaDeviceSynchronize")
      st.syncs.emplace_back(l.ts, l.dur);
  }
  std::sort(st.syncs.begin(), st.syncs.end());
  for (int l = 0; l < layers; ++l) {
    const auto at = std::lower_bound(st.syncs.begin(), st.syncs.end(),
                                     std::make_pair(st.layer_start_ts[static_cast<std::size_t>(l)], -1.0));
    st.layer_sync_ts.push_back(at != st.syncs.end() && at->first < st.layer_start_ts[static_cast<std::size_t>(l) + 1]
                                   ? at->first : -1.0);
  }
  auto segment_at = [&](double ts) {  // the layer whose forward ran at ts (binary search: O(log L) per kernel)
    if (ts < st.layer_start_ts.front()) return -1;
    const auto it = std::upper_bound(st.layer_start_ts.begin() + 1, st.layer_start_ts.end(), ts);
    return static_cast<int>(it - st.layer_start_ts.begin()) - 1;
  };

  // Backward kernels: the forward op that made their autograd node (same Sequence number), else the last one's.
  std::unordered_map<std::int64_t, std::size_t> fwd_op_of_seq;
  for (std::size_t i = 0; i < ev.ops.size(); ++i) {
    const CpuOp& o = ev.ops[i];
    if (o.seq < 0 || o.tid != st.main_tid || o.ts < st.t0 || o.ts > st.t1) continue;
    if (starts_with(ev.name(o.name), "autograd::")) continue;
    auto [it, fresh] = fwd_op_of_seq.emplace(o.seq, i);
    if (!fresh && o.ts < ev.ops[it->second].ts) it->second = i;
  }
  int last = layers;  // the backward starts at the head
  for (Kernel& k : st.kernels) {
    if (k.phase != Phase::backward) continue;
    std::int64_t seq = -1;
    if (k.outer >= 0) seq = ev.ops[static_cast<std::size_t>(k.outer)].seq;
    auto it = seq >= 0 ? fwd_op_of_seq.find(seq) : fwd_op_of_seq.end();
    if (it != fwd_op_of_seq.end()) {
      k.forward_op = static_cast<std::int64_t>(it->second);
      last = segment_at(ev.ops[it->second].ts);
    }
    k.segment = last;
  }
  return st;
}

double Step::sync_wait(double a, double b) const {
  double w = 0.0;
  for (auto it = std::lower_bound(syncs.begin(), syncs.end(), std::make_pair(a, -1.0));
       it != syncs.end() && it->first < b; ++it)
    w += it->second;
  return w;
}

}  // namespace scalescope::calib::trace
