// The GUI's non-Qt core: session JSON, input loading and prediction (mirrors cli/cmd_simulate.cpp).
#include "scalescope/gui/workbench.hpp"

#include <cstdlib>
#include <utility>

#include "scalescope/calibrate/fit.hpp"
#include "scalescope/calibrate/hardware.hpp"
#include "scalescope/calibrate/profile.hpp"
#include "scalescope/models/compute_profile.hpp"
#include "scalescope/sim/cluster_variant.hpp"
#include "scalescope/sim/data_files.hpp"
#include "scalescope/sim/json_reader.hpp"

namespace scalescope::gui {

models::Plan Session::default_plan() {
  models::Plan p;
  p.tp = 8;
  p.pp = 1;
  p.dp = 1;
  p.mbs = 1;
  p.gbs = 8;
  return p;
}

Json session_to_json(const Session& s) {
  Json j = {{"schema", "scalescope.gui_session/1"},
            {"model", s.model},
            {"plan", models::to_json(s.plan)},
            {"cluster", s.cluster},
            {"nodes", s.nodes},
            {"calibration", s.calibration},
            {"fidelity", s.fidelity},
            {"nvlink_scale", s.nvlink_scale},
            {"nic_scale", s.nic_scale},
            {"interference", s.interference}};
  if (s.gpudirect_rdma) j["gpudirect_rdma"] = *s.gpudirect_rdma;
  if (s.pcie_only_p2p) j["pcie_only_p2p"] = true;
  if (!s.tab.empty()) j["tab"] = s.tab;
  return j;
}

Expected<Session> session_from_json(const Json& doc, const std::string& file) {
  return catch_errors([&] {
    JsonCursor c(doc, file);
    c.expect_object();
    c.expect_keys({"schema", "model", "plan", "cluster", "nodes", "calibration", "fidelity", "nvlink_scale",
                   "nic_scale", "interference", "gpudirect_rdma", "pcie_only_p2p", "tab"});
    const std::string schema = c.get_string("schema");
    if (schema != "scalescope.gui_session/1") {
      c.at("schema").fail("expected \"scalescope.gui_session/1\", got \"" + schema + "\"");
    }
    Session s;
    s.model = c.get_string("model");
    s.plan = models::read_plan(c.at("plan"));  // errors name $.plan.KEY
    s.cluster = c.get_string("cluster");
    if (auto n = c.find("nodes")) s.nodes = static_cast<int>(n->as_int_in(0, 1 << 20));  // checked before narrowing
    s.calibration = c.get_string("calibration", "");
    if (auto f = c.find("fidelity")) s.fidelity = f->as_enum({"analytical", "flow"});
    // What-if factors: the sliders' range is far inside this (docs/plausible-ranges.md).
    if (auto f = c.find("nvlink_scale")) s.nvlink_scale = f->as_number_in(1e-3, 1e3);
    if (auto f = c.find("nic_scale")) s.nic_scale = f->as_number_in(1e-3, 1e3);
    if (auto f = c.find("interference")) s.interference = f->as_bool();
    if (auto f = c.find("gpudirect_rdma")) s.gpudirect_rdma = f->as_bool();
    if (auto f = c.find("pcie_only_p2p")) s.pcie_only_p2p = f->as_bool();
    s.tab = c.get_string("tab", "");
    return s;
  });
}

Expected<Session> load_session(const std::filesystem::path& file) {
  auto doc = read_json_file(file);
  if (!doc) return doc.error();
  return session_from_json(*doc, file.string());
}

Expected<bool> save_session(const Session& s, const std::filesystem::path& file) {
  return write_file_atomic(file, dump_json(session_to_json(s)) + "\n");
}

std::filesystem::path cluster_file(const std::string& name_or_path) {
  if (looks_like_path(name_or_path)) return name_or_path;
  if (const auto f = find_data_file("topologies", name_or_path)) return f->path;
  return data_dirs("topologies").back() / (name_or_path + ".json");  // does not exist: the loader says so
}

namespace {

/// Multiplies the bandwidth fields of the links whose kind is `kind` (node links) by `f`.
void scale_links(Json& links, const std::string& kind, double f) {
  if (!links.is_array()) return;
  for (auto& l : links) {
    if (!l.is_object() || !l.contains("kind") || l["kind"] != kind) continue;  // no get<> on a wrong type
    for (const char* key : {"bandwidth_GBps", "per_link_GBps"}) {
      if (l.contains(key) && l[key].is_number()) l[key] = l[key].get<double>() * f;
    }
  }
}

bool touches_nic(const Json& l) {
  for (const char* end : {"a", "b"}) {
    if (!l.contains(end)) continue;
    const Json& v = l[end];
    auto is_nic = [](const Json& s) { return s.is_string() && s.get<std::string>().rfind("nic", 0) == 0; };
    if (is_nic(v)) return true;
    if (v.is_array()) {
      for (const auto& e : v) {
        if (is_nic(e)) return true;
      }
    }
  }
  return false;
}

/// The what-if switches as a cluster variant.
ClusterVariant variant_of(const Session& s) {
  ClusterVariant v;
  v.gpudirect_rdma = s.gpudirect_rdma;
  v.pcie_only = s.pcie_only_p2p;
  return v;
}

Expected<Cluster> load_scaled_cluster(const Session& s, ClusterOptions copt) {
  const ClusterVariant variant = variant_of(s);
  if (s.nvlink_scale == 1.0 && s.nic_scale == 1.0 && variant.empty())
    return load_cluster_by_name_or_path(s.cluster, copt);
  const auto file = cluster_file(s.cluster);
  auto doc = read_json_file(file);
  if (!doc) return doc.error();
  Json d = std::move(doc).value();
  if (d.contains("node") && d["node"].is_object() && d["node"].contains("links")) {
    Json& links = d["node"]["links"];
    scale_links(links, "nvlink", s.nvlink_scale);
    if (links.is_array()) {
      for (auto& l : links) {
        if (!l.is_object() || !touches_nic(l)) continue;
        for (const char* key : {"bandwidth_GBps", "per_link_GBps"}) {
          if (l.contains(key) && l[key].is_number()) l[key] = l[key].get<double>() * s.nic_scale;
        }
      }
    }
  }
  if (d.contains("fabric") && d["fabric"].is_object() && d["fabric"].contains("nic_speed_Gbps") &&
      d["fabric"]["nic_speed_Gbps"].is_number()) {
    d["fabric"]["nic_speed_Gbps"] = d["fabric"]["nic_speed_Gbps"].get<double>() * s.nic_scale;
  }
  const std::string label = variant.empty() ? " (what-if scaled)" : " (what-if: " + variant.describe() + ")";
  return cluster_from_json(apply_variant(std::move(d), variant), file.string() + label, copt);
}

}  // namespace

Expected<Inputs> load_inputs(const Session& s) {
  auto model = models::load_model_by_name_or_path(s.model);
  if (!model) return model.error();
  return load_inputs(*model, s);
}

Expected<Inputs> load_inputs(const models::ModelSpec& model, const Session& s) {
  Inputs in;
  in.model = model;
  in.plan = s.plan;
  ClusterOptions copt;
  if (s.nodes > 0) {
    copt.nodes = s.nodes;
  } else {
    copt.gpus = s.plan.gpus();
  }
  auto cluster = load_scaled_cluster(s, copt);
  if (!cluster) return cluster.error();
  in.cluster.emplace(std::move(cluster).value());
  auto hw = calib::load_hardware_models(s.calibration, *in.cluster);
  if (!hw) return hw.error();
  in.params = std::move(hw->params);
  in.collective_source = std::move(hw->collective_source);
  in.compute.emplace(std::move(hw->compute));
  in.compute_source = std::move(hw->compute_source);
  if (!s.interference) in.compute->set_interference({}, "switched off (what-if)");
  return in;
}

namespace {
/// Counts finished tasks into a RunControl and stops the simulation when it is cancelled: the exception leaves
/// the simulator through its callers (nothing of the run is kept) and predict() below returns it as an error.
class ProgressObserver : public SimObserver {
 public:
  explicit ProgressObserver(RunControl& c) : c_(c) {}
  void simulation_started(const TaskGraph& graph) override {
    c_.tasks_total.store(graph.size(), std::memory_order_relaxed);
    done_ = 0;  // one observer may see several runs (a plan checked at two fidelities)
    c_.tasks_done.store(0, std::memory_order_relaxed);
    check();
  }
  void task_finished(int, int, TaskId, SimTime) override {
    if ((++done_ & 4095u) == 0) {
      c_.tasks_done.store(done_, std::memory_order_relaxed);
      check();
    }
  }
  void simulation_finished(SimTime) override { c_.tasks_done.store(done_, std::memory_order_relaxed); }

 private:
  void check() const {
    if (c_.cancel.load(std::memory_order_relaxed)) throw ErrorException(runtime_error("cancelled"));
  }
  RunControl& c_;
  std::uint64_t done_ = 0;
};
}  // namespace

Expected<models::Prediction> predict(const Inputs& in, const std::string& fidelity, bool record_task_times,
                                     RunControl* control) {
  const CollectiveModel collectives(*in.cluster, in.params);
  models::PredictOptions po;
  po.fidelity = fidelity == "flow" ? Fidelity::flow : Fidelity::analytical;
  po.analytical_intra_node = true;
  po.build.per_layer_tasks = false;
  po.build.costs.flash_attention = true;
  po.build.costs.dropout = false;
  po.record_task_times = record_task_times;
  if (!control) return models::predict(in.model, in.plan, *in.cluster, collectives, *in.compute, po);
  ProgressObserver progress(*control);
  po.observers.push_back(&progress);
  try {
    return models::predict(in.model, in.plan, *in.cluster, collectives, *in.compute, po);
  } catch (const ErrorException& e) {
    return e.error;
  }
}

Expected<Inputs> InputsCache::get(const Session& s) {
  auto it = models_.find(s.model);
  if (it == models_.end()) {
    auto model = models::load_model_by_name_or_path(s.model);
    if (!model) return model.error();
    it = models_.emplace(s.model, std::move(model).value()).first;
  }
  return get(it->second, s);
}

Expected<Inputs> InputsCache::get(const models::ModelSpec& model, const Session& s) {
  const std::string key = s.cluster + "|" + (s.nodes > 0 ? "n" + std::to_string(s.nodes) : "g" + std::to_string(s.plan.gpus())) +
                          "|" + std::to_string(s.nvlink_scale) + "|" + std::to_string(s.nic_scale) + "|" +
                          variant_of(s).describe() + "|" + s.calibration;
  auto it = hardware_.find(key);
  if (it == hardware_.end()) {
    Session as_loaded = s;
    as_loaded.interference = true;  // cached as the profile says; switched per scenario below
    auto in = load_inputs(model, as_loaded);
    if (!in) return in.error();
    it = hardware_.emplace(key, std::move(in).value()).first;
  }
  Inputs in = it->second;  // a copy: the switch below leaves the cached inputs as loaded
  in.model = model;
  in.plan = s.plan;
  if (!s.interference) in.compute->set_interference({}, "switched off (what-if)");
  return in;
}

std::vector<std::string> model_names() { return models::catalog_names(); }
std::vector<std::string> cluster_names() { return available_cluster_names(); }
std::vector<std::string> profile_names() { return calib::available_profile_names(); }

}  // namespace scalescope::gui
