// The GUI's non-Qt core: a session (model, plan, cluster, calibration, what-if scales), loading
// its inputs through the same library calls as `scalescope simulate`, and predicting one iteration.
#pragma once

#include <atomic>
#include <cstdint>

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "scalescope/models/compute_model.hpp"
#include "scalescope/models/model_spec.hpp"
#include "scalescope/models/plan.hpp"
#include "scalescope/models/predict.hpp"
#include "scalescope/sim/cluster.hpp"
#include "scalescope/sim/collective.hpp"
#include "scalescope/sim/error.hpp"

namespace scalescope::gui {

/// Everything a user chose; saved and opened as JSON (schema "scalescope.gui_session/1").
struct Session {
  std::string model = "llama3-8b";  ///< catalog name, native model file or HF config.json
  models::Plan plan = default_plan();
  std::string cluster = "hgx-h200-8";  ///< name from topologies/ or a file
  int nodes = 0;                       ///< 0: as many as the plan needs
  std::string calibration;             ///< profile name/file; empty: datasheet values
  std::string fidelity = "analytical";  ///< analytical | flow
  double nvlink_scale = 1.0;           ///< what-if: NVLink bandwidth factor
  double nic_scale = 1.0;              ///< what-if: NIC / fabric bandwidth factor
  bool interference = true;            ///< what-if: the profile's compute-communication interference
  std::optional<bool> gpudirect_rdma;  ///< what-if: GPUDirect RDMA on/off (nullopt: as the cluster file says)
  bool pcie_only_p2p = false;          ///< what-if: NVLink removed, GPUs talk over PCIe (switch, root complex, UPI)
  std::string tab;                     ///< tab shown when opened (optional)

  static models::Plan default_plan();
};

Json session_to_json(const Session& s);
Expected<Session> session_from_json(const Json& doc, const std::string& file);
Expected<Session> load_session(const std::filesystem::path& file);
Expected<bool> save_session(const Session& s, const std::filesystem::path& file);

/// The cluster file a name refers to (as load_cluster_by_name_or_path resolves it).
std::filesystem::path cluster_file(const std::string& name_or_path);

/// Loaded inputs of one prediction (the same objects `scalescope simulate` builds).
struct Inputs {
  models::ModelSpec model;
  models::Plan plan;
  std::optional<Cluster> cluster;
  CollectiveParams params = datasheet_collective_params();
  std::string collective_source = "built-in datasheet parameters";
  std::optional<models::ComputeModel> compute;
  std::string compute_source = "datasheet roofline";
};

/// Loads model, plan, cluster (scaled by the what-if factors when they differ from 1: NVLink link
/// bandwidths and the fabric's NIC speed / NIC links in the cluster file; with the what-if switches applied as
/// the cluster variant of sim/cluster_variant.hpp), calibration.
Expected<Inputs> load_inputs(const Session& s);
/// The same with the model already loaded (measured runs carry their model inline).
Expected<Inputs> load_inputs(const models::ModelSpec& model, const Session& s);

/// Keeps loaded clusters + fitted calibrations (the slow part of load_inputs: the collective fit)
/// by (cluster, size, what-if scales, calibration), and models by name; only used from one thread.
class InputsCache {
 public:
  Expected<Inputs> get(const Session& s);
  Expected<Inputs> get(const models::ModelSpec& model, const Session& s);

 private:
  std::map<std::string, Inputs> hardware_;
  std::map<std::string, models::ModelSpec> models_;
};

/// Progress and cancellation of one predict() run, shared between the worker running it and the window.
struct RunControl {
  std::atomic<std::uint64_t> tasks_total{0};  ///< tasks of the graph being simulated (0 while it is built)
  std::atomic<std::uint64_t> tasks_done{0};   ///< tasks finished so far
  std::atomic<bool> cancel{false};            ///< set by the window; the run stops within a few thousand tasks
};

/// models::predict with the options `scalescope simulate` uses (flash attention, per-layer tasks
/// off); `record_task_times` keeps per-task times for the timeline. With `control`, the simulation reports
/// its progress there and stops with the runtime error "cancelled" once control->cancel is set.
Expected<models::Prediction> predict(const Inputs& in, const std::string& fidelity, bool record_task_times,
                                     RunControl* control = nullptr);

/// Names of catalog models, topologies and calibration profiles (for the pickers).
std::vector<std::string> model_names();
std::vector<std::string> cluster_names();
std::vector<std::string> profile_names();

}  // namespace scalescope::gui
