// import_torch_trace (torch_trace.hpp): the trace's rows, host cost, kernel gap and memory anchors, on top of a
// built-in stack's memory rules, as one `scalescope.stack/1` document.
#include "scalescope/calibrate/torch_trace.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "scalescope/models/counts.hpp"
#include "scalescope/models/stack_profile.hpp"
#include "scalescope/sim/statistics.hpp"
#include "torch_trace_impl.hpp"

namespace scalescope::calib {

namespace {

using namespace trace;

double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

bool starts_with(const std::string& s, std::string_view p) { return s.rfind(p, 0) == 0; }

/// Median idle time between back-to-back kernels of one stream: the next was launched before the previous ended,
/// so the GPU had it queued and the gap is the GPU's own.
double kernel_gap_us(const Events& ev, const Step& st) {
  std::vector<std::pair<std::int64_t, std::size_t>> by_stream;
  for (std::size_t i = 0; i < st.kernels.size(); ++i) by_stream.emplace_back(ev.gpu[st.kernels[i].gpu].stream, i);
  std::sort(by_stream.begin(), by_stream.end(), [&](auto& a, auto& b) {
    return a.first != b.first ? a.first < b.first : ev.gpu[st.kernels[a.second].gpu].ts < ev.gpu[st.kernels[b.second].gpu].ts;
  });
  std::vector<double> gaps;
  for (std::size_t j = 1; j < by_stream.size(); ++j) {
    if (by_stream[j].first != by_stream[j - 1].first) continue;
    const Kernel &a = st.kernels[by_stream[j - 1].second], &b = st.kernels[by_stream[j].second];
    const GpuActivity &ga = ev.gpu[a.gpu], &gb = ev.gpu[b.gpu];
    if (ev.launches[b.launch].ts < ga.ts + ga.dur && gb.ts >= ga.ts + ga.dur) gaps.push_back(gb.ts - (ga.ts + ga.dur));
  }
  return median(gaps);
}

/// Coincidences of the trace's symbols that leave the import unable to tell sizes apart: one sequence per micro-batch
/// (T = s: what grows with the tokens and what grows with the sequence, as an unfused attention's s^2, look alike),
/// or the tokens or the sequence equal to a model width (a weight's size equals an activation's). One note naming
/// them all, none when there are none.
std::vector<std::string> degenerate_trace_shape(const Symbols& sym) {
  auto at = [&](const char* k) {
    auto it = sym.find(k);
    return it == sym.end() ? 0.0 : it->second;
  };
  std::string found;
  auto add = [&](const std::string& what) { found += (found.empty() ? "" : ", ") + what; };
  if (at("b") == 1.0 && at("T") > 0.0) add("one sequence per micro-batch (T = s = " + std::to_string(std::lround(at("s"))) + ")");
  for (const char* t : {"T", "s"}) {
    for (const char* w : {"H", "Q", "K", "F", "Vu", "E"}) {
      const double a = at(t);
      if (a > 0.0 && a == at(w)) add(std::string(t) + " = " + w + " = " + std::to_string(std::lround(a)));
    }
  }
  if (found.empty()) return {};
  return {"trace shape: " + found + ", so some sizes fit two expressions and may scale the wrong way (a weight's with "
          "the tokens, attention's s^2 with T): trace at 2 or more sequences whose tokens and length equal no model "
          "width (e.g. 2 x 1536 for a model of hidden 2048), or check the rows' size expressions"};
}

struct Host {
  double layer_forward_us = 0, layer_backward_us = 0, edges_us = 0, optimizer_us = 0, step_us = 0;
  double after_sync_us = 0;  ///< of layer_forward_us: issued after the layer's first sync (every layer has one)
  bool syncs_every_layer = false;
};

/// Profiled CPU time of the step's parts: a layer's forward (between the first launches of consecutive layers on
/// the main thread), a layer's backward (between the first backward launches of consecutive layers), the
/// optimizer windows, and the rest; each less the main thread's waits for the GPU in it (Step::syncs: the host
/// idles there, the GPU's time is not the host's).
Host profiled_host(const Events& ev, const Step& st) {
  Host h;
  const int L = st.layers;
  h.step_us = st.t1 - st.t0 - st.sync_wait(st.t0, st.t1);
  const double f0 = st.layer_start_ts.front(), fL = st.layer_start_ts[static_cast<std::size_t>(L)];
  h.layer_forward_us = (fL - f0 - st.sync_wait(f0, fL)) / L;
  h.syncs_every_layer = st.waits_in_every_layer();
  if (h.syncs_every_layer) {
    double after = 0.0;
    for (int l = 0; l < L; ++l) {
      const double s = st.layer_sync_ts[static_cast<std::size_t>(l)], e = st.layer_start_ts[static_cast<std::size_t>(l) + 1];
      after += e - s - st.sync_wait(s, e);
    }
    h.after_sync_us = after / L;
  }
  std::vector<double> first(static_cast<std::size_t>(L), -1.0);
  for (const Kernel& k : st.kernels) {
    if (k.phase != Phase::backward || k.segment < 0 || k.segment >= L) continue;
    double& f = first[static_cast<std::size_t>(k.segment)];
    if (f < 0.0) f = ev.launches[k.launch].ts;
  }
  if (L > 1 && first.front() >= 0.0 && first.back() >= 0.0)
    h.layer_backward_us = (first.front() - first.back() - st.sync_wait(first.back(), first.front())) / (L - 1);
  for (const auto& w : st.optimizer_windows) h.optimizer_us += w.second - w.first;
  h.edges_us = std::max(0.0, h.step_us - L * (h.layer_forward_us + h.layer_backward_us) - h.optimizer_us);
  return h;
}

/// Memory in tensors of the attention score matrix's size at the trace (b x heads_r x s x s elements of 1, 2 or 4
/// bytes: masks, bf16 and fp32 scores and probabilities): the forward's growth of them per layer (between the first
/// and the last layer's start, as the activations), and how many more of them are live at the forward and
/// backward's peak (`peak`, allocated bytes). Zero where the trace keeps none (fused attention) or has no layers.
/// `persistent`: a score-sized tensor the forward reads before the step allocated one, so allocated before the step and
/// kept across steps (Megatron-Core's GlobalMemoryBuffer, the baddbmm input of its unfused attention: session 29's
/// blind check measured every shape 1.5-3 GiB above the prediction until it was found; mcore_memory_probe.py).
struct ScoreMemory {
  double elements = 0.0, per_layer = 0.0, transient = 0.0, persistent = 0.0;
};

/// Bytes per element of a recorded input type (0 when unknown).
double element_bytes(const std::string& type) {
  if (type == "c10::BFloat16" || type == "c10::Half" || type == "short int") return 2.0;
  if (type == "float" || type == "int") return 4.0;
  if (type == "double" || type == "long int") return 8.0;
  if (type == "bool" || type == "unsigned char" || type == "signed char") return 1.0;
  return 0.0;
}

ScoreMemory score_memory(const Events& ev, const std::vector<const MemoryEvent*>& mem, const Step& st,
                         const Symbols& sym, double first_forward, double peak) {
  ScoreMemory out;
  const auto at = [&](const char* n) { const auto it = sym.find(n); return it == sym.end() ? 0.0 : it->second; };
  out.elements = at("b") * at("heads_r") * at("s") * at("s");
  if (!(out.elements > 0.0) || st.layer_start_ts.size() < 2) return out;
  // Score tensors only where the forward shows one: an operator input of the score's elements whose last two dims are
  // the sequence ([b x heads, s, s] or [b, heads, s, s]). Byte counts alone mistake other tensors for scores when the
  // sizes coincide: a fused attention keeps none, yet at 2 x 1024 with heads 16 and ffn 8192 a bf16 T x F tensor has
  // b heads s^2 x 2 bytes (set o27 of session 27, re-measured in session 31: memory +112% at 4 x 4096).
  const double s_len = at("s");
  const auto score_shaped = [&](const OpInput& in) {
    const std::size_t n = in.dims.size();
    return n >= 3 && in.elements == out.elements && static_cast<double>(in.dims[n - 1]) == s_len &&
           static_cast<double>(in.dims[n - 2]) == s_len;
  };
  bool seen = false;
  for (const CpuOp& op : ev.ops) {
    if (op.ts < first_forward || op.ts >= st.layer_start_ts.back()) continue;
    for (const OpInput& in : op.inputs) seen = seen || score_shaped(in);
    if (seen) break;
  }
  if (!seen) return out;
  const auto score_sized = [&](double bytes) {
    const double a = std::fabs(bytes);
    return a == out.elements || a == 2.0 * out.elements || a == 4.0 * out.elements;
  };
  // Live score-sized bytes over the step, from the forward's start (none are live then: last step's backward
  // freed them).
  double live = 0.0, at_first = -1.0, at_last = -1.0, at_peak = 0.0;
  bool peak_seen = false;
  for (const MemoryEvent* m : mem) {
    if (m->ts < first_forward) continue;
    if (at_first < 0.0 && m->ts > st.layer_start_ts.front()) at_first = live;  // as allocated_at: at or before
    if (at_last < 0.0 && m->ts > st.layer_start_ts.back()) at_last = live;
    if (score_sized(m->bytes)) live += m->bytes;
    if (!peak_seen && !in_optimizer(st, m->ts) && m->total_allocated >= peak) at_peak = live, peak_seen = true;
  }
  if (at_first < 0.0 || at_last < 0.0) return out;
  const double layers = static_cast<double>(st.layers);
  out.per_layer = std::max(0.0, (at_last - at_first) / layers);
  out.transient = std::max(0.0, at_peak - layers * out.per_layer);
  // The forward's first read of a score-sized tensor, against the score-sized bytes the step had allocated by then.
  const CpuOp* first = nullptr;
  const OpInput* input = nullptr;
  for (const CpuOp& op : ev.ops) {
    if (op.ts < first_forward || op.ts >= st.layer_start_ts.back() || (first != nullptr && op.ts >= first->ts)) continue;
    for (const OpInput& in : op.inputs)
      if (in.dims.size() >= 2 && in.elements == out.elements && element_bytes(in.type) > 0.0) {
        first = &op, input = &in;
        break;
      }
  }
  if (first != nullptr) {
    double allocated = 0.0;
    for (const MemoryEvent* m : mem)
      if (m->ts >= first_forward && m->ts < first->ts && score_sized(m->bytes)) allocated += m->bytes;
    const double bytes = out.elements * element_bytes(input->type);
    if (allocated < bytes) out.persistent = bytes;
  }
  return out;
}

/// Allocated bytes just before `ts` (the last CUDA memory event at or before it), or -1 without one.
double allocated_at(const std::vector<const MemoryEvent*>& mem, double ts) {
  double v = -1.0;
  for (const MemoryEvent* m : mem) {
    if (m->ts > ts) break;
    v = m->total_allocated;
  }
  return v;
}

std::string short_software(const std::string& s) { return s.empty() ? "PyTorch (version not recorded in the trace)" : s; }

}  // namespace

Expected<TraceImport> import_torch_trace(const std::string& file, const models::ModelSpec& model_in,
                                         const TraceImportOptions& options) {
  TraceImportOptions o = options;
  if (!o.host_process_times_s.empty()) {
    const auto& t = o.host_process_times_s;
    if (t.size() < 2 || t.size() > 64)
      return input_error("", "--host-process-times", "expected 2 to 64 processes' step times, got " +
                                                         std::to_string(t.size()));
    for (double v : t)
      if (!(v > 0.0 && v < 3600.0)) return input_error("", "--host-process-times", "expected seconds in (0, 3600)");
    if (!o.host_step_time_s) o.host_step_time_s = scalescope::median(t);  // as run_steps.py's (Python's) median
  }
  if (o.micro_batch <= 0 || o.micro_batch > (1 << 20))
    return input_error("", "--micro-batch", "expected the traced step's micro-batch size (1 to 1048576)");
  // The model loader's own limits (model_spec.hpp): the import sizes tables by them.
  if (o.layers < 0 || o.layers > models::kMaxModelLayers)
    return input_error("", "--layers", "expected 0 (the model's) to " + std::to_string(models::kMaxModelLayers));
  if (o.seq < 0 || o.seq > models::kMaxModelSeqLen)
    return input_error("", "--seq", "expected 0 (the model's) to " + std::to_string(models::kMaxModelSeqLen));
  if (o.host_micro_batch <= 0 || o.host_micro_batch > (1 << 20) || o.host_seq < 0 || o.host_seq > models::kMaxModelSeqLen)
    return input_error("", "--host-shape", "expected a micro-batch of 1 to 1048576 and a sequence of at most " +
                                               std::to_string(models::kMaxModelSeqLen));
  if (o.host_step_time_s && !(*o.host_step_time_s > 0.0 && *o.host_step_time_s < 3600.0))
    return input_error("", "--host-step-time", "expected seconds in (0, 3600)");
  if (o.step_time_s && !(*o.step_time_s > 0.0 && *o.step_time_s < 3600.0))
    return input_error("", "--step-time", "expected seconds in (0, 3600)");
  models::ModelSpec model = model_in;
  if (o.layers > 0) model.layers = o.layers;
  if (o.seq > 0) model.seq_len = o.seq;
  auto base_doc = models::builtin_stack_document(o.base);
  if (!base_doc) return base_doc.error();
  auto base_stack = models::load_stack(o.base);  // the same built-in, loaded once per process
  if (!base_stack) return base_stack.error();
  const models::StackProfile* base = base_stack->get();

  auto events = read_events(file, o.progress);
  if (!events) return events.error();
  const Events& ev = *events;
  TraceImport out;
  TraceImportSummary& sum = out.summary;
  sum.events = ev.events;
  sum.gpu = ev.gpu_name;
  auto step = analyse_step(ev, model.layers, file, sum);
  if (!step) return step.error();
  const Step& st = *step;

  // The traced plan: one GPU; FSDP2 (its record_function ranges) marks a ZeRO-3 program; bf16 parameters
  // (the optimizer's inputs) a pure-bf16 one.
  bool fsdp = false;
  for (const auto& a : ev.annotations) fsdp = fsdp || starts_with(ev.name(a.name), "FSDP::");
  // The parameters' dtype: the embedding table's (the first lookup of a vocab x hidden table in the step).
  bool bf16_params = false;
  for (const CpuOp& op : ev.ops) {
    if (op.ts < st.t0 || op.ts > st.t1 || op.inputs.empty()) continue;
    const std::string& n = ev.name(op.name);
    if (n != "aten::embedding" && n != "aten::gather" && n != "aten::index_select") continue;
    const auto& d = op.inputs.front().dims;
    if (d.size() == 2 && d[0] == model.vocab && d[1] == model.hidden) {
      bf16_params = op.inputs.front().type == "c10::BFloat16";
      break;
    }
  }
  models::Plan plan;
  plan.mbs = o.micro_batch;
  plan.gbs = o.micro_batch;
  plan.zero = fsdp ? 3 : 0;
  plan.precision = bf16_params ? models::Precision::bf16 : models::Precision::mixed;
  // FP8 GEMMs in the step (torch._scaled_mm, Float8 inputs): the traced program trains in FP8, so the trace's plan
  // is an FP8 one. An FP8 plan's rules are then anchored at an FP8 trace (rule(plan) / rule(trace) = 1 at the
  // traced shape), and the stack's trace symbols say fp8 = 1, which keeps the model from adding Transformer
  // Engine's FP8 casts, copies and savings on top of what the trace measured (fp8_measured_in_stack). Session 19:
  // without this a torch._scaled_mm program was priced 6-7% slow and +45% in memory at its own traced shape.
  if (const auto fp8_op = fp8_gemm_op(ev, st)) {
    plan.precision = models::Precision::fp8;
    plan.grad_reduce_in_fp32 = !bf16_params;  // the gradients in the parameters' dtype
    sum.notes.push_back("FP8 GEMMs in the trace (" + *fp8_op + "): imported as an FP8 program; its FP8 casts and "
                        "memory are the trace's, not Transformer Engine's");
  }
  const double params = static_cast<double>(models::count_params(model).total());
  // An MoE program whose layers are all MoE layers: the layer rows are an MoE layer's (symbol moe_layer = 1 at the
  // trace; docs/moe.md).
  const bool moe_layers = model.is_moe() && model.moe_layers() == model.layers;
  if (model.is_moe() && !moe_layers) {
    return input_error("--model", "", "model '" + model.name + "' mixes dense and MoE layers: an imported stack has one "
                                      "row list per layer, so import a trace of a model whose layers are all alike");
  }
  const std::vector<double> v = base->bind(model, plan, true, false, 128, params, moe_layers);
  Symbols sym;
  const auto& names = models::stack_base_symbols();
  for (std::size_t i = 0; i < names.size(); ++i) sym[names[i]] = v[i];

  // Sizes are told apart by their values at the trace: where two symbols the rows scale by are equal there, a
  // tensor's size fits both and the import may take the wrong one (session 28: two blind checks traced at such shapes
  // were 9% and 27-34% off in median, up to +57% and +157%).
  for (const std::string& n : degenerate_trace_shape(sym)) sum.notes.push_back(n);
  if (o.progress) o.progress("step: " + std::to_string(st.kernels.size()) + " GPU activities, " +
                             std::to_string(st.period) + " forward kernels per layer");
  Json phases = build_rows(ev, st, sym, sum, !o.memory_scaling_sweep);
  add_accumulation_rows(ev, st, model, phases, sum);
  for (const Kernel& k : st.kernels) sum.gpu_busy_s += ev.gpu[k.gpu].dur * 1e-6;

  // Host cost.
  const Host host = profiled_host(ev, st);
  if (!(host.layer_forward_us >= 0.0) || !(host.layer_backward_us >= 0.0) || !(host.optimizer_us >= 0.0)) {
    // Found by the fuzzer (fuzz/regressions/torch_trace/): one flipped timestamp bit made layer 1's first launch
    // come after layer 2's, a negative host time per layer, and a stack that did not load.
    return input_error(file, "", "the CPU launches of the step's layers are out of order (host time per layer " +
                                     std::to_string((host.layer_forward_us + host.layer_backward_us) * 1e-6) +
                                     " s forward + backward): the trace's timestamps are inconsistent; export it again");
  }
  double D = 1.0;
  const std::string how_host = o.host_step_time_s
      ? "the trace's CPU time per part divided by the profiler's dilation D, which makes the unprofiled step time " +
            std::to_string(*o.host_step_time_s) + " s at " + std::to_string(o.host_micro_batch) + " x " +
            std::to_string(o.host_seq) + " (GPU idle) what the host takes: S = (step - optimizer)/D + max(optimizer/D, "
            "optimizer GPU time)"
      : "the trace's CPU time as profiled (no unprofiled host-bound step time given: over-states the host)";
  if (o.host_step_time_s) {
    const double S = *o.host_step_time_s * 1e6, G = sum.optimizer_gpu_s * 1e6;
    const double rest = host.step_us - host.optimizer_us;
    if (S <= G) {
      // Before session 26 this kept the profiled host time silently (D = 1), a stack that prices every host-bound
      // step as slow as the profiler made it.
      return input_error("", "--host-step-time", std::to_string(*o.host_step_time_s) + " s is no longer than the step's "
                         "optimizer alone on the GPU (" + std::to_string(G * 1e-6) + " s in this trace): it cannot be "
                         "this program's unprofiled step at " + std::to_string(o.host_micro_batch) + " x " +
                         std::to_string(o.host_seq) + "; time that step without the profiler (run_steps.py measure)");
    }
    if (rest > 0.0) D = rest / (S - G);
    if (host.optimizer_us / D > G) D = host.step_us / S;
    if (!(D > 0.0) || !std::isfinite(D)) {
      return input_error("", "--host-step-time", "cannot be explained by this trace (the step's optimizer alone takes " +
                                                     std::to_string(G * 1e-6) + " s of GPU time)");
    }
  } else {
    sum.notes.push_back("no --host-step-time: host time per layer kept as profiled, which torch.profiler dilates "
                        "(record_shapes, profile_memory); launch-bound shapes will be predicted too slow");
  }
  sum.host_dilation = D;
  Json host_json{{"per_layer_microbatch_s", {{"module", (host.layer_forward_us + host.layer_backward_us) / D * 1e-6}}},
                       {"per_edge_microbatch_s", host.edges_us / D * 1e-6},
                       {"per_step_s", host.optimizer_us / D * 1e-6},
                       {"source", file},
                       {"method", how_host}};
  // The split of a layer's host time, so that the order of host work shows where the host waits for the GPU
  // (sim/host_dispatch.hpp): the forward's share, and the share of the forward issued after its first sync.
  if (host.layer_forward_us + host.layer_backward_us > 0.0) {
    host_json["forward_share"] = host.layer_forward_us / (host.layer_forward_us + host.layer_backward_us);
    if (host.syncs_every_layer && host.layer_forward_us > 0.0)
      host_json["after_sync_share"] = std::clamp(host.after_sync_us / host.layer_forward_us, 0.0, 1.0);
  }
  if (!st.syncs.empty()) {
    sum.notes.push_back(std::to_string(st.syncs.size()) + " host waits for the GPU in the step (" +
                        std::to_string(st.sync_wait(st.t0, st.t1) * 1e-3) + " ms, left out of the host time)" +
                        (host.syncs_every_layer ? "; every layer's forward waits: its kernels after the first wait are "
                                                  "rows of their own (after_sync)"
                                                : ""));
  }
  if (!o.host_process_times_s.empty() && o.host_step_time_s) {
    Json samples = Json::array();
    for (double t : o.host_process_times_s) samples.push_back(std::clamp(t / *o.host_step_time_s, 0.1, 10.0));
    host_json["process_samples"] = samples;
    host_json["method"] = how_host + "; process_samples: " + std::to_string(samples.size()) +
                          " processes' host-bound step times relative to it (a plan of N ranks waits for the expected "
                          "slowest of N)";
  }

  // Memory anchors.
  std::vector<const MemoryEvent*> mem;
  for (const auto& m : ev.memory)
    if (m.device_type == 1 && m.ts >= st.t0 && m.ts <= st.t1) mem.push_back(&m);
  Json base_memory = (*base_doc)["memory"];
  Json memory = base_memory;
  std::vector<std::pair<std::string, double>> mem_symbols;
  std::sort(mem.begin(), mem.end(), [](const MemoryEvent* a, const MemoryEvent* b) { return a->ts < b->ts; });
  double first_forward = st.t1;
  for (const Kernel& k : st.kernels)
    if (k.phase == Phase::forward) first_forward = std::min(first_forward, ev.launches[k.launch].ts);
  if (!mem.empty()) {
    // States: what is allocated when the forward starts (zero_grad has freed last step's gradients).
    const double at_forward = allocated_at(mem, first_forward);
    const double start = at_forward >= 0.0 ? at_forward : mem.front()->total_allocated - mem.front()->bytes;
    const double a0 = allocated_at(mem, st.layer_start_ts.front());
    const double aL = allocated_at(mem, st.layer_start_ts.back());
    // The rest is what the forward and backward hold beyond the states and the layers' activations at their peak;
    // the optimizer step's own peak (states, every gradient, its temporaries) is anchored apart. Taking the rest at
    // the step's peak when that peak is the optimizer's gave the optimizer's temporaries to the logits rule, which
    // grows them with the tokens: session 26's blind check (a 5.6B-parameter MoE, bf16 AdamW) came out +26..+36% at
    // 8,192 tokens (validation/session26/).
    double peak = start, opt_peak = 0.0;
    for (const MemoryEvent* m : mem) {
      double& phase_peak = in_optimizer(st, m->ts) ? opt_peak : peak;
      phase_peak = std::max(phase_peak, m->total_allocated);
    }
    const double act = a0 >= 0.0 && aL >= a0 ? (aL - a0) / model.layers : 0.0;
    const double states = std::max(0.0, start);
    memory["measured"] = {{"states_bytes", states},
                          {"activations_per_layer_bytes", act},
                          {"rest_bytes", std::max(0.0, peak - start - model.layers * act)},
                          {"optimizer_peak_bytes", opt_peak},
                          {"note", "from the trace's [memory] events: allocated before the step, the forward's growth "
                                   "per layer, and the rest at the forward and backward's peak (" +
                                   std::to_string(peak / 1073741824.0) + " GiB; the optimizer step's " +
                                   std::to_string(opt_peak / 1073741824.0) + " GiB)"}};
    // An unfused attention keeps tensors of the score matrix's size (b x heads x s x s) for the backward and makes
    // more of them there: they grow with the sequence squared, the rest with the tokens (session 28: Megatron-Core's
    // local attention held 6 bytes per score element per layer, 28.6 GiB at 1x4096 and 104.5 at 1x8192 against 19.6
    // and 37.7 priced as tokens).
    const ScoreMemory scores = score_memory(ev, mem, st, sym, first_forward, peak);
    if (scores.per_layer > 0.0) {
      memory["scores_per_layer"] = "recompute_none ? b*heads_r*s*s : 0";
      memory["scores_transient"] = "b*heads_r*s*s";
      memory["measured"]["score_activations_per_layer_bytes"] = std::min(scores.per_layer, act);
      memory["measured"]["score_rest_bytes"] = scores.transient;
      char note[320];
      std::snprintf(note, sizeof note,
                    "unfused attention: %.2f GiB per layer of the forward's growth in tensors of the score matrix's size "
                    "(b*heads*s*s = %.0f elements; %.1f bytes per element), %.2f GiB more of them at the peak, and %.2f "
                    "GiB of them kept across steps (read before the step allocated any); all scale with b*heads*s*s",
                    scores.per_layer / 1073741824.0, scores.elements, scores.per_layer / scores.elements,
                    scores.transient / 1073741824.0, scores.persistent / 1073741824.0);
      sum.notes.push_back(note);
    }
    if (scores.persistent > 0.0 && scores.persistent < states) {  // out of the states, scaled as scores
      memory["scores_persistent"] = "b*heads_r*s*s";
      memory["measured"]["score_persistent_bytes"] = scores.persistent;
      memory["measured"]["states_bytes"] = states - scores.persistent;
    }
    const models::StageParams held = models::params_per_tp_rank(model, models::even_layout(model, 1, 1), 0, 1, 128);
    mem_symbols = {{"P", static_cast<double>(held.total())}, {"P_layer_max", static_cast<double>(held.largest_layer)},
                   {"L_stage", static_cast<double>(model.layers)}, {"inflight", 1.0}, {"stage_first", 1.0},
                   {"stage_last", 1.0}, {"activations", act * model.layers},
                   {"P_exp", static_cast<double>(held.experts)}};
  } else {
    sum.notes.push_back("no CUDA [memory] events (profile_memory=False): memory from the " + o.base + " rules alone");
  }

  // Residual stream width: the dtype of the layers' residual adds (aten::add over T x H elements).
  double residual = 2.0;
  for (const Kernel& k : st.kernels) {
    if (k.phase != Phase::forward || k.segment != 0 || k.inner < 0) continue;
    const CpuOp& op = ev.ops[static_cast<std::size_t>(k.inner)];
    if (ev.name(op.name) != "aten::add" || op.inputs.empty()) continue;
    if (std::fabs(op.inputs[0].elements - sym["T"] * sym["H"]) < 0.5 && op.inputs[0].type == "float") residual = 4.0;
  }

  Json trace_symbols = Json::object();
  for (const auto& [n, val] : sym) trace_symbols[n] = val;
  for (const auto& [n, val] : mem_symbols) trace_symbols[n] = val;
  const std::string stem = std::filesystem::path(file).filename().string();
  Json& s = out.stack;
  s = Json{{"schema", "scalescope.stack/1"},
           {"name", o.name.empty() ? stem.substr(0, stem.find('.')) : o.name},
           {"description", "Imported by `scalescope import torch-trace` from " + stem + " (" + ev.gpu_name + "): the " +
                               "traced program's kernels with their measured times, scaled to other shapes by the " +
                               "calibration profile; memory rules of the built-in " + o.base + " stack anchored to " +
                               "the trace's allocations"},
           {"vars", (*base_doc).value("vars", Json::array())},
           {"properties", {{"residual_bytes", residual},
                           {"moe", moe_layers},
                           {"moe_host_sync", host.syncs_every_layer && moe_layers ? "1" : "ep > 1"},
                           {"fsdp2", fsdp ? "zero >= 2 && dp > 1" : "0"},
                           {"ddp_grad_copies", fsdp || o.ddp_bucket_view ? "0" : "dp * cp > 1"},
                           {"grad_tensors_per_layer", parameter_tensors_per_layer(ev, st, model)},
                           {"torch_pipelining", true},
                           {"launch_floor", false},
                           {"kernel_gap_s", kernel_gap_us(ev, st) * 1e-6},
                           {"applies", fsdp ? "zero >= 2" : "zero <= 1"}}},
           {"phases", phases},
           {"memory", memory},
           {"host", host_json},
           {"trace", {{"file", stem}, {"gpu", ev.gpu_name}, {"software", short_software(o.software)},
                      {"step_time_s", o.step_time_s.value_or(0.0)}, {"symbols", trace_symbols}}},
           {"import", {{"events", sum.events}, {"kernels", sum.kernels}, {"forward_kernels_per_layer", st.period},
                       {"gpu_busy_s", sum.gpu_busy_s}, {"layer_forward_gpu_s", sum.layer_forward_gpu_s},
                       {"layer_backward_gpu_s", sum.layer_backward_gpu_s}, {"edge_gpu_s", sum.edge_gpu_s},
                       {"optimizer_gpu_s", sum.optimizer_gpu_s}, {"communication_gpu_s", sum.comm_gpu_s},
                       {"unscaled_gpu_s", sum.fixed_gpu_s}, {"profiled_step_cpu_s", sum.step_cpu_s},
                       {"host_dilation", D}, {"notes", sum.notes}}}};
  // The document must load (every expression parses) before anyone uses it.
  auto check = models::stack_from_json(s, file + " (imported)");
  if (!check) return runtime_error("the imported stack does not load: " + check.error().str());
  return out;
}

}  // namespace scalescope::calib
