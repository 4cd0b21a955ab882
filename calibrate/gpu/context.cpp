// Run-wide state of the calibration program: atomic profile writes, budget bookkeeping, logging.
#include "context.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "scalescope/calibrate/gpu_plan.hpp"
#include "scalescope/sim/file_io.hpp"

namespace scalescope::gpu {

bool Options::has_section(std::string_view s) const {
  return std::find(sections.begin(), sections.end(), s) != sections.end();
}

std::string Profile::write() {
  std::string text;
  {
    std::lock_guard<std::timed_mutex> lock(mu_);
    text = doc_.dump(1, ' ', false, Json::error_handler_t::replace);
  }
  return write_text(text);
}

std::string Profile::write_within(double timeout_s) {
  std::string text;
  {
    std::unique_lock<std::timed_mutex> lock(mu_, std::defer_lock);
    if (!lock.try_lock_for(std::chrono::duration<double>(timeout_s)))
      return "the profile stayed locked";
    text = doc_.dump(1, ' ', false, Json::error_handler_t::replace);
  }
  return write_text(text);
}

std::string Profile::write_text(const std::string& text) {
  std::lock_guard<std::mutex> lock(write_mu_);
  // The one output path of the project: exclusive temp file in the folder, fsync, rename.
  auto ok = write_file_atomic(path_, text + "\n");
  return ok ? std::string() : ok.error().str();
}

RunContext::RunContext(Options o, Profile& p)
    : opt(std::move(o)), profile(p), t0_(std::chrono::steady_clock::now()) {
  deadline_s_ = opt.time_budget_s;
}

double RunContext::now_s() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
}

void RunContext::begin_section(const std::string& name, double weight, double remaining_weight) {
  section_ = name;
  profile.edit(
      [&](Json& d) { d["status"]["current_section"] = name; });  // the watchdog reads it there
  deadline_s_ = calib::section_deadline(now_s(), opt.time_budget_s, weight, remaining_weight);
  log(strf("starting; section deadline at %.1f s of the %.0f s budget", deadline_s_,
           opt.time_budget_s));
}

void RunContext::budget_stop(const std::string& what) {
  const std::string entry = section_ + ": stopped before " + what;
  profile.edit([&](Json& d) {
    d["status"]["budget_exhausted"] = true;
    d["status"]["budget_skipped"].push_back(entry);
  });
  log("time budget reached, stopped before " + what);
}

void RunContext::record_error(const std::string& message) {
  const std::string where = section_.empty() ? "startup" : section_;
  profile.edit([&](Json& d) {
    d["status"]["errors"].push_back(Json{{"section", where}, {"message", message}});
  });
  log("ERROR: " + message);
}

void RunContext::save() {
  profile.edit([&](Json& d) { d["status"]["elapsed_s"] = round_to(now_s(), 0.01); });
  const std::string err = profile.write();
  if (!err.empty()) log("WARNING: could not write the profile: " + err);
}

void RunContext::log(const std::string& text) const {
  std::cerr << strf("[%7.1fs] %s: ", now_s(), section_.empty() ? "calibrate" : section_.c_str())
            << text << std::endl;
}

std::string strf(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  va_list ap2;
  va_copy(ap2, ap);
  const int n = std::vsnprintf(nullptr, 0, fmt, ap);
  va_end(ap);
  std::string out(n > 0 ? static_cast<std::size_t>(n) : 0, '\0');
  if (n > 0) std::vsnprintf(out.data(), out.size() + 1, fmt, ap2);
  va_end(ap2);
  return out;
}

double round_to(double v, double quantum) {
  if (!std::isfinite(v) || quantum <= 0.0) return v;
  // Print with the quantum's decimals and read back: the nearest double to a short decimal, which
  // nlohmann::json prints short again (round(v/q)*q can give 12.300000000000001).
  const int decimals = std::clamp(static_cast<int>(std::lround(-std::log10(quantum))), 0, 12);
  char buf[512];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return std::strtod(buf, nullptr);
}

}  // namespace scalescope::gpu
