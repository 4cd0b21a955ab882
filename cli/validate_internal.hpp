// Internals of `scalescope validate a100` shared by its source files: parsed rows, the A100 system
// a prediction runs on, and the per-node-count clusters built for it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "scalescope/models/compute_model.hpp"
#include "scalescope/models/model_spec.hpp"
#include "scalescope/models/plan.hpp"
#include "scalescope/sim/cluster.hpp"
#include "scalescope/sim/collective.hpp"
#include "scalescope/validate/rig.hpp"
#include "validate_a100.hpp"

namespace scalescope::cli {

/// One row's model and plan, as read from the data file.
struct RowConfig {
  int gpus = 0, tp = 1, pp = 1, dp = 1, mbs = 1, gbs = 1;
  int hidden = 0, heads = 0, layers = 0, seq = 0;
  std::int64_t vocab = 0;
  /// Megatron-DeepSpeed's fp16 engine (vTrain's rows): gradients reduced in fp16. Else Megatron-LM
  /// 2021 as we assume Narayanan et al. ran it: fp32 gradients reduced.
  bool deepspeed_fp16 = false;
};

/// The GPT model of a row (Megatron GPT: ffn 4h, GeLU, LayerNorm, biases, learned positions, tied embeddings).
models::ModelSpec gpt(const RowConfig& c);
/// The row's plan as Megatron-LM 2021 / Megatron-DeepSpeed ran it (1F1B, full recompute, one
/// gradient all-reduce after the backward).
models::Plan megatron_plan(const RowConfig& c);

/// A data file read: the rows (measured only) and their configurations, index for index.
struct ParsedSet {
  ValidationSet set;
  std::vector<RowConfig> configs;
  bool vtrain = false;  ///< iteration times on vTrain's machine (else Narayanan's TFLOP/s on Selene)
};
ParsedSet parse_narayanan(const std::filesystem::path& file);              ///< throws ErrorException
ParsedSet parse_vtrain(const std::filesystem::path& file, bool multi);     ///< throws ErrorException

/// Everything a prediction depends on besides the row.
struct SystemSpec {
  std::filesystem::path data_dir;
  bool vtrain_machine = true;         ///< vTrain rows on vtrain-cluster.json with vtrain_collectives
  bool per_layer_collectives = true;  ///< vTrain rows: one collective per TP operation (exact latencies)

  CollectiveParams vtrain_collectives = datasheet_collective_params();
  std::string collectives_description;
  models::ComputeAssumptions compute;  ///< datasheet roofline assumptions (fitted or defaults)
};
Expected<SystemSpec> make_system(const std::filesystem::path& dir, const A100Options& options, bool fitted);

using validate::Rig;

/// Clusters by (vTrain machine?, node count), built once each. Not thread-safe; Rig is read-only.
class Rigs {
 public:
  explicit Rigs(SystemSpec sys) : sys_(std::move(sys)) {}
  Expected<Rig*> get(int gpus, bool vtrain);
  const SystemSpec& system() const { return sys_; }

 private:
  SystemSpec sys_;
  std::map<std::pair<bool, int>, std::unique_ptr<Rig>> rigs_;
};

/// Predicts every row not skipped (in the set's unit), on `threads` threads; fills each row's
/// fits_memory, breakdown or skipped. Returns the predictions index for index (0 when skipped).
std::vector<double> predict_set(const ParsedSet& parsed, Rigs& rigs, std::vector<ValidationRow>& rows, int threads);

/// Title, quantity, source and assumptions of a set for the report.
void describe_set(ValidationSet& set, const SystemSpec& base, const A100Options& options);

}  // namespace scalescope::cli
