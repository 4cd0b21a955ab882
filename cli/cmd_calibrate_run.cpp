// `scalescope calibrate run`: the GPU measurement program, either as given (`calibrate run -o p.json ...`, every
// argument passed to scalescope-calibrate) or in one command for a model (`calibrate run --model M -o DIR`): the
// GEMM and attention shapes of its plans (calibrate/model_shapes.hpp), scalescope-calibrate on them, and the
// attention timing (validation/attention/measure_attention.py) at the model's shapes, into a directory that
// `--calibration DIR` composes (calibrate/hardware.hpp).
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>

#include "calibrate_common.hpp"
#include "scalescope/calibrate/model_shapes.hpp"
#include "scalescope/sim/data_files.hpp"
#include "scalescope/sim/json_reader.hpp"

extern char** environ;

namespace scalescope::cli {

namespace {

namespace fs = std::filesystem;

/// scalescope-calibrate next to this executable, in the build tree's calibrate/gpu/, or on PATH.
std::optional<fs::path> find_calibrate_binary(std::vector<std::string>& looked) {
  const std::string name = "scalescope-calibrate";
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    for (const fs::path& c : {self.parent_path() / name, self.parent_path().parent_path() / "calibrate" / "gpu" / name}) {
      looked.push_back(c.string());
      if (fs::is_regular_file(c, ec) && ::access(c.c_str(), X_OK) == 0) return c;
    }
  }
  if (const char* path = std::getenv("PATH")) {
    std::string p(path);
    std::size_t start = 0;
    while (start <= p.size()) {
      const auto colon = p.find(':', start);
      const std::string dir = p.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
      if (!dir.empty()) {
        const fs::path c = fs::path(dir) / name;
        if (fs::is_regular_file(c, ec) && ::access(c.c_str(), X_OK) == 0) return c;
      }
      if (colon == std::string::npos) break;
      start = colon + 1;
    }
    looked.push_back("$PATH");
  }
  return std::nullopt;
}

Expected<fs::path> calibrate_binary() {
  std::vector<std::string> looked;
  if (auto bin = find_calibrate_binary(looked)) return *bin;
  std::string where;
  for (const auto& l : looked) where += (where.empty() ? "" : ", ") + l;
  return runtime_error("scalescope-calibrate was not found (looked in " + where +
                       "). It is built from calibrate/gpu/ only when the CUDA toolkit, cuBLAS and NCCL are found at "
                       "configure time; build it there (target scalescope-calibrate) and run it on the GPU machine.");
}

/// Runs argv[0] (looked up on PATH when it has no '/') with this process's stdin/stdout/stderr and waits:
/// its exit status, 128 + signal when a signal ended it, or an error when it could not start.
Expected<int> run_child(const std::vector<std::string>& args) {
  std::vector<std::string> copy = args;
  std::vector<char*> argv;
  for (auto& s : copy) argv.push_back(s.data());
  argv.push_back(nullptr);
  std::cout.flush();
  std::cerr.flush();
  pid_t pid = 0;
  if (const int e = ::posix_spawnp(&pid, argv[0], nullptr, nullptr, argv.data(), environ); e != 0)
    return runtime_error("cannot start " + args[0] + ": " + std::strerror(e));
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return runtime_error("waiting for " + args[0] + ": " + std::strerror(errno));
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

/// `calibrate run ARGS...` without --model: exec scalescope-calibrate with ARGS.
int run_as_given(const std::vector<std::string>& args) {
  auto bin = calibrate_binary();
  if (!bin) return report("calibrate run", bin.error());
  std::vector<std::string> argv_s{bin->string()};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& s : argv_s) argv.push_back(s.data());
  argv.push_back(nullptr);
  std::cerr << "scalescope calibrate run: exec " << bin->string() << "\n";
  std::cout.flush();
  ::execv(bin->c_str(), argv.data());
  return report("calibrate run", runtime_error("cannot execute " + bin->string() + ": " + std::strerror(errno)));
}

struct ModelRun {
  std::vector<std::string> models;
  calib::ShapeRequest request;
  std::string output = "calibration";
  std::optional<int> gpus;
  double budget_s = 300;
  std::string python = "python3";
  bool no_attention = false;
  std::vector<std::string> extra;  ///< after `--`: more scalescope-calibrate options
};

/// Seconds of attention timing per shape (forward + backward, warm-up and timed repeats in
/// measure_attention.py): about 1 s on the H100 of session 10 (9 shapes in 9 s, docs/calibration.md); an estimate, printed only.
constexpr double kAttentionSecondsPerShape = 1.0;

class Steps {
 public:
  explicit Steps(int total) : total_(total), t0_(std::chrono::steady_clock::now()) {}
  void begin(const std::string& what) {
    std::cerr << "scalescope calibrate run: [" << ++n_ << "/" << total_ << "] " << what << " (at " << elapsed()
              << " s)\n";
  }
  long elapsed() const {
    return static_cast<long>(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count() + 0.5);
  }

 private:
  int total_, n_ = 0;
  std::chrono::steady_clock::time_point t0_;
};

std::optional<fs::path> attention_script() {
  std::error_code ec;
  for (const fs::path& dir : data_dirs("validation/attention")) {
    const fs::path f = dir / "measure_attention.py";
    if (fs::is_regular_file(f, ec)) return f;
  }
  return std::nullopt;
}

int run_for_model(const ModelRun& o) {
  const std::string cmd = "calibrate run";
  auto shapes = calib::calibration_shapes(o.models, o.request);
  if (!shapes) return report(cmd, shapes.error());
  auto bin = calibrate_binary();
  if (!bin) return report(cmd, bin.error());
  const auto script = attention_script();
  if (!o.no_attention && !script)
    return report(cmd, runtime_error("validation/attention/measure_attention.py was not found (looked under "
                                     "$SCALESCOPE_DATA_DIR and the source tree); give --no-attention to skip it"));
  const fs::path dir(o.output);
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
    return report(cmd, input_error("", "-o/--output", "expected a directory for the calibration, got the file " +
                                                         o.output));
  fs::create_directories(dir, ec);
  if (ec) return report(cmd, runtime_error("cannot create " + o.output + ": " + ec.message()));
  const std::string shapes_file = (dir / "shapes.json").string();
  if (auto w = write_file_atomic(shapes_file, calib::to_json(*shapes).dump(1) + "\n"); !w) return report(cmd, w.error());

  Steps steps(o.no_attention ? 2 : 3);
  steps.begin("shapes of " + std::to_string(o.models.size()) + " model(s): " + std::to_string(shapes->gemms.size()) +
              " GEMM shapes x " + std::to_string(shapes->dtypes.size()) + " dtype(s), " +
              std::to_string(shapes->attention.size()) + " attention shapes -> " + shapes_file);

  std::vector<std::string> args{bin->string(), "-o", (dir / "gpu.json").string(), "--gemm-shapes", shapes_file,
                                "--time-budget-s", std::to_string(o.budget_s)};
  if (o.gpus) {
    args.push_back("--gpus");
    args.push_back(std::to_string(*o.gpus));
  }
  args.insert(args.end(), o.extra.begin(), o.extra.end());
  steps.begin("GPU program " + bin->filename().string() + ": topology, memory-bound bandwidth, launch rate, GEMMs "
              "(the grid and these shapes), collectives and P2P on 2+ GPUs; at most " +
              std::to_string(static_cast<long>(o.budget_s)) + " s (--time-budget-s)");
  auto gpu = run_child(args);
  if (!gpu) return report(cmd, gpu.error());
  if (*gpu == 2) return 2;  // bad options: the program said which
  int rc = *gpu == 0 ? 0 : 1;
  if (*gpu != 0)
    std::cerr << "scalescope calibrate run: the GPU program exited " << *gpu
              << " (a partial profile is kept; its status.errors say what failed)\n";

  if (!o.no_attention) {
    const double estimate = kAttentionSecondsPerShape * static_cast<double>(shapes->attention.size());
    steps.begin("attention (" + o.python + " " + script->string() + ") at " +
                std::to_string(shapes->attention.size()) + " shapes, about " +
                std::to_string(static_cast<long>(estimate + 0.5)) + " s");
    auto att = run_child({o.python, script->string(), (dir / "attention.json").string(), "--shapes", shapes_file});
    if (!att || *att != 0) {
      std::cerr << "scalescope calibrate run: attention was not measured ("
                << (att ? "exit " + std::to_string(*att) : att.error().message)
                << "): it needs PyTorch with CUDA in --python; attention is then priced from the datasheet\n";
      rc = 1;
    }
  }
  std::cerr << "scalescope calibrate run: done after " << steps.elapsed() << " s; use it as --calibration "
            << o.output << " (with a fabric profile for multi-GPU plans: --calibration " << o.output << ",FABRIC)\n";
  return rc;
}

int run_calibrate(const std::vector<std::string>& args) {
  if (std::find(args.begin(), args.end(), "--model") == args.end()) return run_as_given(args);
  ModelRun o;
  CLI::App app("scalescope calibrate run --model MODEL ... [-- scalescope-calibrate options]");
  add_shape_options(app, o.models, o.request);
  app.add_option("-o,--output", o.output, "Directory to write shapes.json, gpu.json and attention.json into")
      ->capture_default_str();
  app.add_option("--gpus", o.gpus, "GPUs to use (default: all visible; sections between GPUs are skipped on one)");
  app.add_option("--time-budget-s", o.budget_s, "Time budget of the GPU program")->capture_default_str();
  app.add_option("--python", o.python, "Python with PyTorch (CUDA) for the attention timing")->capture_default_str();
  app.add_flag("--no-attention", o.no_attention, "Skip the attention timing (priced from the datasheet)");
  app.add_option("extra", o.extra, "After --: more scalescope-calibrate options");
  try {
    std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 parses a vector from its back
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  return run_for_model(o);
}

}  // namespace

void register_calibrate_run(CLI::App* calibrate, Context& ctx) {
  CLI::App* run = calibrate->add_subcommand(
      "run",
      "Run the GPU measurement program scalescope-calibrate (next to this binary, in the build tree, or on PATH). "
      "With --model: in one command, the GEMM and attention shapes of that model's plans (--mbs, --seq, --tp), "
      "scalescope-calibrate on them and the attention timing, into -o DIR (default ./calibration) for "
      "`--calibration DIR`; `scalescope calibrate run --model M --help` lists those options. Without --model every "
      "argument goes to scalescope-calibrate, e.g. `scalescope calibrate run -o h200x4.json --time-budget-s 420`");
  run->prefix_command();
  run->callback([run, &ctx] { ctx.exit_code = run_calibrate(run->remaining()); });
}

}  // namespace scalescope::cli
