// Shared pieces of `scalescope calibrate fit|report` (see calibrate_common.hpp).
#include "calibrate_common.hpp"

#include <cstdio>

namespace scalescope::cli {

void add_calibrate_common(CLI::App* sub, CalibrateCommon& o) {
  sub->add_option("PROFILE", o.profile, "Calibration profile: a JSON file or a name from calibrate/profiles/ (e.g. h200x4)")
      ->required();
  sub->add_option("--cluster", o.cluster, "Cluster the profile was measured on: a name from topologies/ or a JSON file")
      ->required();
  sub->add_option("--nodes", o.nodes, "Nodes to build the cluster with (default: as many as the profile's groups need)");
  sub->add_option("--fit-groups", o.fit_groups, "Fit only on rows of these group sizes (comma-separated, e.g. 2)")
      ->delimiter(',');
  sub->add_option("--fit-ops", o.fit_ops, "Fit only on these collectives (comma-separated)")->delimiter(',');
  add_format_option(sub, o.format);
}

Expected<Loaded> load_profile_and_cluster(const std::string& profile_name, const CalibrateCommon& o) {
  auto profile = calib::load_profile_by_name_or_path(profile_name);
  if (!profile) return profile.error();
  ClusterOptions copt;
  copt.nodes = o.nodes;
  auto cluster = load_cluster_by_name_or_path(o.cluster, copt);
  if (!cluster) return cluster.error();
  if (!o.nodes) {
    const int need = calib::nodes_needed(*profile, cluster->gpus_per_node());
    if (need > cluster->num_nodes()) {
      copt.nodes = need;
      cluster = load_cluster_by_name_or_path(o.cluster, copt);
      if (!cluster) return cluster.error();
    }
  }
  Loaded out{std::move(profile).value(), std::nullopt};
  out.cluster.emplace(std::move(cluster).value());
  return out;
}

Expected<calib::FitOptions> fit_options(const CalibrateCommon& o) {
  calib::FitOptions f;
  for (int g : o.fit_groups) {
    if (g < 2) return input_error("", "--fit-groups", "expected group sizes of at least 2 GPUs, got " + std::to_string(g));
    f.groups.push_back(g);
  }
  for (const auto& op : o.fit_ops) {
    if (!parse_coll_op(op))
      return input_error("", "--fit-ops", "expected names from " + coll_op_choices() + ", got '" + op + "'");
    f.ops.push_back(op);
  }
  return f;
}

std::string fmt_fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string join_ints(const std::vector<int>& v) {
  std::string out;
  for (int x : v) out += (out.empty() ? "" : ",") + std::to_string(x);
  return out;
}

void add_shape_options(CLI::App& app, std::vector<std::string>& models, calib::ShapeRequest& request) {
  request.seqs.clear();
  app.add_option("--model", models, "Catalog name, native model JSON or HF config.json (repeatable)")->required();
  app.add_option("--mbs", request.micro_batches, "Micro-batch sizes the plans use")->delimiter(',')->capture_default_str();
  app.add_option("--seq", request.seqs, "Sequence lengths (default: each model's seq_len)")->delimiter(',');
  app.add_option("--tp", request.tps, "Tensor-parallel widths (GEMMs are taken at their TP shards)")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--cp", request.cps,
                 "Context-parallel sizes: each rank's GEMMs at mbs x seq / cp tokens and its attention over seq / cp "
                 "(the shapes a plan with cp is priced at; cp whose 2 cp does not divide seq is skipped)")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--ep", request.eps,
                 "Expert-parallel sizes (MoE models: the routed experts' GEMMs at the tokens per expert of each; "
                 "docs/moe.md)")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--packed-doc-tokens", request.packed_doc_tokens,
                 "Fine-tuning on packed sequences: document lengths (plan key packed_doc_tokens); each adds the "
                 "attention shape such plans are priced at (mbs x seq / doc documents of doc tokens, timed with the "
                 "varlen kernel)")
      ->delimiter(',');
  app.add_option("--dtypes", request.dtypes, "GEMM dtypes: bf16, fp8_e4m3, fp8_e4m3_fast, fp16, tf32, fp32 (FP8 plans of the fused stack: fp8_e4m3 "
                 "prices the dgrad and wgrad GEMMs, fp8_e4m3_fast the forward ones, as Transformer Engine runs them; "
                 "without fast rows the forward is the fp8_e4m3 rate / the built-in speed-up, docs/profile-format.md)")
      ->delimiter(',')
      ->capture_default_str();
}

}  // namespace scalescope::cli
