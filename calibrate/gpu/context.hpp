// Run-wide state of the calibration program: options, the profile document (written atomically,
// shared with the watchdog thread), the clock, the time budget and progress logging.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace scalescope::gpu {

using Json = nlohmann::ordered_json;

/// Sections in measuring order.
inline const std::vector<std::string> kSectionOrder = {"topo", "mem",  "p2p",
                                                       "coll", "gemm", "interf"};

struct Options {
  std::string output = "calibration-profile.json";
  int gpus = 0;  ///< 0: every visible GPU
  std::uint64_t min_bytes = 8;
  std::uint64_t max_bytes = 1ull << 30;
  std::vector<std::string> sections = kSectionOrder;
  std::vector<std::string> coll_ops;     ///< empty: all
  std::vector<std::string> gemm_dtypes;  ///< empty: all
  std::string gemm_shapes_file;          ///< scalescope.calibration-shapes/1: shapes timed besides the grid
  bool gemm_grid = true;                 ///< false: only the file's shapes (--gemm-grid none)
  double time_budget_s = 480.0;
  int iters = 20;
  int warmup = 5;
  bool quick = false;
  bool allow_nvls = false;
  double watchdog_s = 0.0;  ///< 0: time budget + 90 s
  std::string check_cluster;  ///< cluster for the closing health check (empty: chosen from the GPU type)
  std::string command_line;

  bool has_section(std::string_view s) const;
};

/// The profile JSON document. edit() runs a function on it under a lock; write() saves it to
/// a temporary file next to the output and renames it over the output, so a reader (or a crash)
/// never sees half a file.
class Profile {
 public:
  explicit Profile(std::string path) : path_(std::move(path)) {}

  template <class F>
  void edit(F&& f) {
    std::lock_guard<std::timed_mutex> lock(mu_);
    f(doc_);
  }
  /// Like edit(), but gives up (returning false) if the document stays locked for timeout_s.
  template <class F>
  bool edit_within(double timeout_s, F&& f) {
    std::unique_lock<std::timed_mutex> lock(mu_, std::defer_lock);
    if (!lock.try_lock_for(std::chrono::duration<double>(timeout_s))) return false;
    f(doc_);
    return true;
  }
  /// Saves the document; returns an empty string or what went wrong.
  std::string write();
  /// Like write(), but gives up (returning a message) if the document stays locked for timeout_s.
  std::string write_within(double timeout_s);
  const std::string& path() const { return path_; }

 private:
  std::string write_text(const std::string& text);

  std::timed_mutex mu_;  // guards doc_
  std::mutex write_mu_;  // one file write at a time
  Json doc_ = Json::object();
  std::string path_;
};

class RunContext {
 public:
  RunContext(Options opt, Profile& profile);

  Options opt;
  int ngpus = 0;  ///< GPUs used: CUDA devices 0 .. ngpus-1
  Profile& profile;
  /// Set when a helper thread was left inside a library call (a hung ncclCommDestroy): the
  /// program then ends with std::_Exit so that library teardown does not race with it.
  bool detached_work = false;

  double now_s() const;
  /// Starts a section: its deadline is its share of the time left (gpu_plan's section_deadline).
  void begin_section(const std::string& name, double weight, double remaining_weight);
  const std::string& section() const { return section_; }
  double deadline_s() const { return deadline_s_; }
  /// True when something predicted to take predicted_s still ends before the section's deadline.
  bool fits(double predicted_s) const { return now_s() + predicted_s <= deadline_s_; }
  /// Records that the budget stopped the section before `what`, and logs it.
  void budget_stop(const std::string& what);
  /// Records an error of the current section (status.errors) and logs it.
  void record_error(const std::string& message);
  /// Writes the profile; logs (does not throw) when that fails.
  void save();
  /// One progress line on stderr: "[  12.3s] section: text".
  void log(const std::string& text) const;

 private:
  std::chrono::steady_clock::time_point t0_;
  std::string section_;
  double deadline_s_ = 0.0;
};

/// printf-style formatting into a std::string.
std::string strf(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
/// v rounded to a multiple of quantum (for readable JSON); non-finite values stay as they are
/// (nlohmann::json writes them as null).
double round_to(double v, double quantum);

}  // namespace scalescope::gpu
