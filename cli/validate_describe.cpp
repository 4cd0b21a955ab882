// Titles, sources and the stated assumptions of each `scalescope validate a100` set, for the report.
#include "validate_internal.hpp"

namespace scalescope::cli {

namespace {

std::vector<std::string> common_assumptions(bool vtrain_rows, const SystemSpec& base, const A100Options& o) {
  std::vector<std::string> a;
  if (vtrain_rows && base.vtrain_machine) {
    a.push_back("Cluster vtrain-a100 (validation/a100/vtrain-cluster.json): DGX A100 80GB nodes with 4 x 200 Gb/s HDR "
                "InfiniBand per node (vTrain's configs: inter_node_bandwidth 800, read as Gb/s by vTrain's predictor), "
                "non-blocking 3-tier fat tree; built with ceil(GPUs/8) nodes.");
    a.push_back("Collectives: " + base.collectives_description + ". One collective per TP operation "
                "(per-layer tasks), so every TP all-reduce pays its own latency.");
  } else {
    a.push_back("Cluster superpod-a100 (topologies/superpod-a100.json): DGX A100 80GB nodes, 8 x 200 Gb/s HDR "
                "InfiniBand per node, 3-tier non-blocking fat tree; built with ceil(GPUs/8) nodes.");
    a.push_back("Collectives: built-in datasheet NCCL parameters (datasheet_collective_params); the TP collectives of "
                "a pipeline unit are merged into one per op (their fixed latencies are dropped).");
  }
  a.push_back("Compute: datasheet roofline (no A100 GEMM profile): A100 312 TFLOP/s bf16/fp16 dense, 2,039 GB/s HBM; "
              "0.85 of HBM for GEMM operand traffic. Unfitted: 0.75 of peak for GEMMs, 0.7 of HBM for elementwise "
              "kernels, 5 us per kernel (ComputeAssumptions defaults).");
  if (o.fit) {
    char buf[1024];
    std::snprintf(buf, sizeof buf,
                  "FITTED (column 'predicted'): gemm_efficiency %.3f and launch_overhead %.1f us per kernel "
                  "(elementwise_efficiency stays %.2f, not fitted), fitted on the 1,440 vTrain single-node rows only (validation/a100/fit.json, MAPE there "
                  "%.1f%% -> %.1f%%); the column 'unfitted' uses the defaults above.",
                  o.fit->gemm_efficiency, o.fit->launch_overhead_us, o.fit->elementwise_efficiency,
                  100.0 * o.fit->mape_before, 100.0 * o.fit->mape_after);
    a.push_back(buf);
  } else {
    a.push_back("No parameter was fitted on step times.");
  }
  a.push_back("Attention: unfused (Megatron 2021 style: QK^T and AV batched GEMMs, fused scale-mask-softmax and "
              "dropout kernels, scores in memory), not FlashAttention.");
  if (vtrain_rows) {
    a.push_back("Training: Megatron-DeepSpeed fp16 (plan precision=fp16): fp16 weights and gradients, gradients "
                "all-reduced in fp16 (DeepSpeed's communication_data_type defaults to fp16 when fp16 is enabled; "
                "vTrain's own predictor counts 2-byte gradients, src/predictor.py), fp32 master weights and Adam; "
                "full activation recompute, 1F1B schedule, one gradient all-reduce of the whole buffer after the "
                "backward (no bucketing, no overlap: DeepSpeed's PipelineEngine reduces after the last backward; "
                "vTrain's use_gradient_bucket: false).");
  } else {
    a.push_back("Training: mixed precision (16-bit compute, fp32 gradients all-reduced), Adam, full activation "
                "recompute, 1F1B schedule, one gradient all-reduce of the whole buffer after the backward (no "
                "bucketing, no overlap, as in Megatron-LM 2021).");
  }
  a.push_back("Fidelity: analytical, one representative pipeline (symmetric). Collectives that run in lockstep "
              "share links: the DP all-reduces of a stage's TP ranks (and the TP collectives of its DP replicas) "
              "are declared concurrent, so e.g. on 4 NICs per 8 GPUs the DP groups of tp=8 get half a NIC each, "
              "as a flow run of every rank gives (TaskGraph::set_concurrent; tested against flow fidelity in "
              "tests/sim/collective_concurrent_test.cpp).");
  a.push_back("Model: GPT (ffn 4h, GeLU, LayerNorm, biases, learned positions, tied embeddings), vocabulary padded "
              "to a multiple of 128 x tp as Megatron does.");
  return a;
}

}  // namespace

void describe_set(ValidationSet& set, const SystemSpec& base, const A100Options& options) {
  if (set.name == "narayanan2021") {
    set.title = "Narayanan et al. 2021, Table 1 (Megatron-LM weak scaling on Selene, A100 80GB)";
    set.quantity = "achieved TFLOP/s per GPU";
    set.source = "D. Narayanan et al., 'Efficient Large-Scale Language Model Training on GPU Clusters Using "
                 "Megatron-LM', SC'21 (arXiv:2104.04473), Table 1; typed into narayanan2021_table1.csv";
    set.assumptions = common_assumptions(false, base, options);
    set.assumptions.push_back("Table 1 gives no micro-batch size or schedule: assumed mbs = 1 and the non-interleaved "
                              "1F1B schedule; dp = GPUs / (tp * pp); vocabulary 51,200, sequence 2,048 (paper).");
    set.assumptions.push_back("Predicted TFLOP/s = F / (step time x GPUs) with the paper's eq. (3), "
                              "F = 96 B s l h^2 (1 + s/(6h) + V/(16 l h)) (counts the recompute forward).");
    set.assumptions.push_back("Not modelled: the paper's scatter/gather of PP activations over TP ranks (PP sends "
                              "carry the full mbs*s*h*2 bytes here), data loading and logging.");
    return;
  }
  const bool multi = set.name == "vtrain-multi";
  set.title = multi ? "vTrain multi-node A100 measurements (64-512 GPUs)" : "vTrain single-node A100 measurements (2-8 GPUs)";
  set.quantity = "iteration time (ms)";
  set.source = std::string("VIA-Research/vTrain data/ (commit f8dda84, MIT), copied to validation/a100/vtrain/") +
               (multi ? "ground_truth_multi.csv" : "ground_truth_single.csv") +
               "; Megatron-DeepSpeed on A100, 8 GPUs per node";
  set.assumptions = common_assumptions(true, base, options);
  set.assumptions.push_back("Vocabulary not in the CSV: GPT-2's 50,257 (Megatron's default tokenizer), padded.");
  if (options.fit) {
    set.assumptions.push_back(multi ? "HELD OUT: no parameter was fitted on these rows."
                                    : "These are the rows the compute parameters were FITTED on (in-sample).");
  }
}

}  // namespace scalescope::cli
