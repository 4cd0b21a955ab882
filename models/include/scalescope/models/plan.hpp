// Parallel training plans (TP/PP/DP/ZeRO, micro-batching, schedule, recompute): parsing and
// validation.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "scalescope/models/model_spec.hpp"

namespace scalescope::models {

enum class Schedule {
  gpipe,
  one_f_one_b,
  interleaved
};                                               ///< names in files: gpipe | 1f1b | interleaved
enum class Recompute { none, selective, full };  ///< Korthikanti et al. 2022 terms
/// mixed: 16-bit compute with fp32 master weights and fp32 gradients (reduced in fp32; bytes per
/// parameter depend on the framework, see memory.hpp); bf16: pure bf16 weights, gradients and Adam
/// moments, no fp32 master copy; fp16: 16-bit weights and gradients (reduced in 16 bits, as
/// DeepSpeed's fp16 engine and Megatron-LM's fp16 default do) with fp32 master weights and Adam.
enum class Precision { mixed, bf16, fp16 };

/// How one training iteration is split over tp * pp * dp GPUs.
struct Plan {
  int tp = 1;
  int pp = 1;
  int dp = 1;
  int zero = 0;  ///< ZeRO stage 0..3 over the dp group
  int mbs = 1;   ///< micro-batch size (sequences)
  int gbs = 1;   ///< global batch size (sequences per iteration)
  Schedule schedule = Schedule::one_f_one_b;
  int vpp = 1;  ///< model chunks per pipeline stage (interleaved schedule)
  Recompute recompute = Recompute::none;
  bool sp = false;  ///< Megatron sequence parallelism (needs tp > 1)
  Precision precision = Precision::mixed;
  double bucket_MB = 25.0;  ///< gradient bucket size (PyTorch DDP default 25 MB)
  bool overlap = true;      ///< overlap gradient reduction with the backward pass
  /// Sequence length of the run (Megatron's --seq-length); 0: the model's seq_len. with_plan_seq() applies it.
  int seq = 0;

  /// tp * pp * dp, computed at 64 bits and saturated at INT_MAX (validate() bounds it far below).
  int gpus() const {
    const long long g = static_cast<long long>(tp) * pp * dp;
    return g > 2147483647LL ? 2147483647 : static_cast<int>(g);
  }
  /// Micro-batches per pipeline per iteration: gbs / (mbs * dp) (the product at 64 bits).
  int num_microbatches() const { return static_cast<int>(gbs / (static_cast<long long>(mbs) * dp)); }
};

std::string_view to_string(Schedule s);
std::string_view to_string(Recompute r);
std::string_view to_string(Precision p);

/// `spec` with the plan's sequence length (Plan::seq) when it sets one.
ModelSpec with_plan_seq(const ModelSpec& spec, const Plan& plan);

/// Parses "tp=8,pp=4,dp=32,zero=1,mbs=1,gbs=1536,schedule=1f1b". Keys: tp pp dp zero mbs gbs
/// schedule vpp recompute sp precision bucket_MB overlap seq; gbs is required, the others default as in
/// Plan. Booleans: true/false/1/0. Errors name the key:
/// "--plan: key 'pp': expected a positive integer, got 'x'". `source` replaces "--plan".
Expected<Plan> parse_plan(std::string_view text, const std::string& source = "--plan");
/// The same keys as a JSON object (numbers, strings and booleans as in the text form).
Expected<Plan> plan_from_json(const Json& json, const std::string& file);
Expected<Plan> load_plan(const std::filesystem::path& file);
/// A path to a JSON plan file (ends in .json or exists) or the text form.
Expected<Plan> parse_plan_or_file(std::string_view text_or_path);

/// Text form with every key, in the order above (seq only when set); parse_plan(to_string(p)) == p.
std::string to_string(const Plan& p);
Json to_json(const Plan& p);
bool operator==(const Plan& a, const Plan& b);

/// Limits validate() enforces: GPUs one plan spans, and micro-batches per pipeline per iteration
/// (the task graph holds tasks per micro-batch; 65,536 is far beyond any real gradient accumulation).
inline constexpr long long kMaxPlanGpus = 1LL << 24;
inline constexpr int kMaxMicrobatches = 65536;

/// What a valid plan still deserves a remark about (fewer GPUs used than available, ZeRO with
/// dp=1...).
struct PlanCheck {
  std::vector<std::string> notes;
};

/// Rejects plans that cannot run, naming the rule: tp divides heads, kv_heads and ffn_hidden (the
/// vocabulary is padded, Megatron-style, so it need not divide); pp divides layers (pp*vpp for
/// interleaved); gbs divisible by mbs*dp; interleaved needs pp > 1, vpp > 1 and microbatches % pp
/// == 0 (Megatron's rule), vpp > 1 needs interleaved; sp needs tp > 1 and seq_len % tp == 0; zero
/// in 0..3; tp*pp*dp <= kMaxPlanGpus (products at 64 bits), gbs/(mbs*dp) <= kMaxMicrobatches;
/// tp*pp*dp <= gpus_available (fewer is allowed with a note; gpus_available <= 0 skips
/// this). Errors have file "plan" and the key as path, e.g. "plan: tp: tp=3 does not divide
/// heads=32".
Expected<PlanCheck> validate(const Plan& plan, const ModelSpec& model, int gpus_available);

}  // namespace scalescope::models
