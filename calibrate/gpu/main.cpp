// scalescope-calibrate: measures NCCL collectives, P2P copies, GEMM throughput, memory and launch
// costs and the topology of the GPUs of one machine, and writes a calibration profile (JSON).
// Exit status: 0 ok, 1 a GPU/runtime failure (the profile keeps what was measured), 2 bad options.
#include <algorithm>
#include <cuda_runtime_api.h>

#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <thread>

#include "check.hpp"
#include "options.hpp"
#include "sections.hpp"

namespace sg = scalescope::gpu;
using sg::Json;

namespace {

/// Share of the time budget each section may use (unused time rolls over to the next ones).
double section_weight(const std::string& s) {
  if (s == "topo") return 1.0;
  if (s == "mem") return 4.0;
  if (s == "p2p") return 6.0;
  if (s == "coll") return 45.0;
  if (s == "gemm") return 44.0;
  return 18.0;  // interf (~65 s on 4 GPUs: 11 kernels x 3 collectives; 73 s of the default 480 s budget)
}

std::string join_argv(int argc, char** argv) {
  std::string out;
  for (int i = 0; i < argc; ++i) {
    if (i > 0) out += ' ';
    out += argv[i];
  }
  return out;
}

Json skeleton(const sg::Options& opt) {
  return Json{{"schema", "scalescope.calibration/1"},
              {"created_utc", sg::utc_now()},
              {"tool", sg::tool_json(opt)},
              {"host", sg::host_json()},
              {"versions", Json::object()},
              {"environment", sg::environment_json()},
              {"gpus", Json::array()},
              {"topology", Json::object()},
              {"collectives", Json::array()},
              {"p2p", Json::array()},
              {"gemm", Json::array()},
              {"gemm_meta", Json::array()},
              {"memory", Json::object()},
              {"status", Json{{"complete", false},
                              {"sections_requested", opt.sections},
                              {"sections_done", Json::array()},
                              {"budget_s", opt.time_budget_s},
                              {"budget_exhausted", false},
                              {"budget_skipped", Json::array()},
                              {"errors", Json::array()},
                              {"elapsed_s", 0.0}}},
              {"provenance", "measured"}};
}

/// Ends the run: fills status, writes the profile, prints the summary; returns the exit status.
int finish(sg::RunContext& ctx, bool all_sections_done) {
  bool has_errors = false;
  ctx.profile.edit([&](Json& d) {
    auto& st = d["status"];
    has_errors = !st["errors"].empty();
    st["complete"] = all_sections_done && !has_errors && !st["budget_exhausted"].get<bool>();
  });
  ctx.save();
  std::string text, health_text;
  ctx.profile.edit([&](Json& d) {
    text = sg::summary_text(d);
    Json health;
    health_text = sg::health_check(d, ctx.profile.path(), ctx.opt.check_cluster, health);
    d["health"] = health;
  });
  ctx.save();
  std::cout << text << "== health check (scalescope calibrate check) ==\n" << health_text
            << "profile: " << ctx.profile.path() << std::endl;
  return has_errors ? 1 : 0;
}

/// Writes the profile and exits if the run outlives its watchdog limit (a hang the per-call
/// timeouts did not catch); stopped by notify().
class Watchdog {
 public:
  Watchdog(sg::RunContext& ctx, double limit_s)
      : thread_([this, &ctx, limit_s] { watch(ctx, limit_s); }) {}
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(m_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

 private:
  void watch(sg::RunContext& ctx, double limit_s) {
    std::unique_lock<std::mutex> lock(m_);
    if (cv_.wait_for(lock, std::chrono::duration<double>(limit_s), [this] { return done_; }))
      return;
    std::string msg =
        sg::strf("watchdog: still running after %.0f s; writing the profile and exiting", limit_s);
    const bool edited = ctx.profile.edit_within(10.0, [&](Json& d) {
      const std::string where = d["status"].value("current_section", std::string("startup"));
      msg += " (section '" + where + "')";
      d["status"]["errors"].push_back(Json{{"section", where}, {"message", msg}});
      d["status"]["complete"] = false;
      d["status"]["elapsed_s"] = sg::round_to(ctx.now_s(), 0.01);
    });
    std::cerr << msg << std::endl;
    const std::string err =
        edited ? ctx.profile.write_within(10.0) : std::string("the profile stayed locked");
    if (!err.empty()) std::cerr << "watchdog: could not write the profile: " << err << std::endl;
    std::_Exit(1);
  }

  std::mutex m_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "scalescope-calibrate: measure NCCL collectives, P2P copies, GEMM throughput, memory "
      "bandwidth, launch\n"
      "overheads, compute-communication interference and the topology of this machine's GPUs, "
      "and write a\n"
      "calibration profile (JSON, schema scalescope.calibration/1; see docs/profile-format.md). "
      "Progress goes\n"
      "to stderr, a summary to stdout.\n"
      "Exit status: 0 ok, 1 GPU/runtime failure (the profile keeps what was measured), 2 bad "
      "options.",
      "scalescope-calibrate"};
  sg::Options opt;
  sg::RawOptions raw;
  sg::add_options(app, opt, raw);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  if (const std::string bad = sg::finish_options(app, opt, raw); !bad.empty()) {
    std::cerr << "scalescope-calibrate: error: " << bad << "\n";
    return 2;
  }
  opt.command_line = join_argv(argc, argv);

  // NVLink multicast (NVLS) can take a shared host's GPUs out of service: off unless asked for.
  std::string nvls_note;
  if (!opt.allow_nvls) {
    const char* v = std::getenv("NCCL_NVLS_ENABLE");
    if (v == nullptr || std::string(v) != "0") {
      nvls_note = std::string("NCCL_NVLS_ENABLE was ") +
                  (v ? std::string("'") + v + "'" : "unset") +
                  "; set to 0 by scalescope-calibrate (--allow-nvls keeps it)";
      ::setenv("NCCL_NVLS_ENABLE", "0", 1);
    }
  }

  sg::Profile profile(opt.output);
  profile.edit([&](Json& d) {
    d = skeleton(opt);
    if (!nvls_note.empty()) d["environment_notes"] = Json::array({nvls_note});
  });
  if (const std::string err = profile.write(); !err.empty()) {
    std::cerr << "scalescope-calibrate: error: -o/--output: " << err << "\n";
    return 2;
  }
  sg::RunContext ctx(opt, profile);
  if (!nvls_note.empty()) ctx.log(nvls_note);
  const double watchdog_s = opt.watchdog_s > 0.0 ? opt.watchdog_s : opt.time_budget_s + 90.0;
  Watchdog watchdog(ctx, watchdog_s);

  try {
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
      const std::string why = e != cudaSuccess ? sg::cuda_error_text(e) : std::string("0 devices");
      cudaGetLastError();
      ctx.record_error("no CUDA device found (cudaGetDeviceCount: " + why +
                       "): this program measures GPUs; run it on a machine with one (collectives and P2P need two)");
      return finish(ctx, false);
    }
    if (opt.gpus > count) {
      ctx.record_error(sg::strf(
          "--gpus %d requested but only %d CUDA device%s visible (CUDA_VISIBLE_DEVICES=%s)",
          opt.gpus, count, count == 1 ? " is" : "s are",
          std::getenv("CUDA_VISIBLE_DEVICES") ? std::getenv("CUDA_VISIBLE_DEVICES") : "unset"));
      return finish(ctx, false);
    }
    ctx.ngpus = opt.gpus > 0 ? opt.gpus : count;
    if (ctx.ngpus < 2) {  // sections between GPUs are left out with a note, the rest still runs
      Json skipped = Json::array();
      for (const char* s : {"coll", "p2p", "interf"}) {
        if (!opt.has_section(s)) continue;
        skipped.push_back(s);
        opt.sections.erase(std::remove(opt.sections.begin(), opt.sections.end(), std::string(s)), opt.sections.end());
      }
      if (!skipped.empty()) {
        const std::string note = "one GPU in use: " + skipped.dump() +
                                 " need at least 2 and are skipped; the fabric part of a calibration comes from a "
                                 "machine with several GPUs (or the cluster's datasheet)";
        ctx.log(note);
        profile.edit([&](Json& d) {
          d["status"]["sections_requested"] = opt.sections;
          d["status"]["sections_skipped"] = Json{{"sections", skipped}, {"reason", note}};
        });
      }
    }
    std::string smi_raw;
    int smi_status = 0;
    const auto smi = sg::query_smi_gpus(smi_raw, smi_status);
    const Json versions = sg::versions_json(smi);
    const Json gpus = sg::gpus_json(ctx.ngpus, smi);
    profile.edit([&](Json& d) {
      d["versions"] = versions;
      d["gpus"] = gpus;
      d["nvidia_smi_query"] = Json{{"exit_status", smi_status}, {"raw", smi_raw}};
    });
    ctx.log(sg::strf(
        "%d GPU(s): %s (cc %s); CUDA runtime %s, driver API %s, NCCL %s, cuBLAS %s", ctx.ngpus,
        gpus[0]["name"].get<std::string>().c_str(), gpus[0]["cc"].get<std::string>().c_str(),
        versions["cuda_runtime"].dump().c_str(), versions["cuda_driver_api"].dump().c_str(),
        versions["nccl"].dump().c_str(), versions["cublas"].dump().c_str()));
    ctx.save();

    bool all_done = true;
    for (std::size_t i = 0; i < sg::kSectionOrder.size(); ++i) {
      const std::string& name = sg::kSectionOrder[i];
      if (!opt.has_section(name)) continue;
      double remaining = 0.0;
      for (std::size_t j = i; j < sg::kSectionOrder.size(); ++j)
        if (opt.has_section(sg::kSectionOrder[j]))
          remaining += section_weight(sg::kSectionOrder[j]);
      ctx.begin_section(name, section_weight(name), remaining);
      std::size_t skipped_before = 0, errors_before = 0;
      profile.edit([&](Json& d) {
        skipped_before = d["status"]["budget_skipped"].size();
        errors_before = d["status"]["errors"].size();
      });
      try {
        if (name == "topo") sg::run_topo(ctx, smi);
        if (name == "mem") sg::run_mem(ctx);
        if (name == "p2p") sg::run_p2p(ctx);
        if (name == "coll") sg::run_coll(ctx);
        if (name == "gemm") sg::run_gemm(ctx);
        if (name == "interf") sg::run_interf(ctx);
      } catch (const sg::GpuError& err) {
        ctx.record_error(err.what());
      } catch (const std::exception& err) {
        ctx.record_error(std::string("unexpected error: ") + err.what());
      }
      bool clean = false;
      profile.edit([&](Json& d) {
        clean = d["status"]["budget_skipped"].size() == skipped_before &&
                d["status"]["errors"].size() == errors_before;
        if (clean) d["status"]["sections_done"].push_back(name);
      });
      all_done = all_done && clean;
      ctx.log(clean ? "done" : "ended early (see status)");
      ctx.save();
    }
    const int rc = finish(ctx, all_done);
    if (ctx.detached_work) {
      std::cout.flush();
      std::cerr.flush();
      std::_Exit(rc);
    }
    return rc;
  } catch (const std::exception& err) {
    ctx.record_error(std::string("unexpected error: ") + err.what());
    return finish(ctx, false);
  }
}
