// `scalescope import torch-trace TRACE.json[.gz] --model MODEL --micro-batch B -o STACK.json`: a one-GPU PyTorch
// profiler trace of the user's own training step -> a stack profile (calibrate/torch_trace.hpp,
// docs/stack-profile.md).
#include <iostream>
#include <memory>
#include <vector>

#include "cli_common.hpp"
#include "scalescope/calibrate/torch_trace.hpp"
#include "scalescope/models/model_spec.hpp"
#include "scalescope/sim/json_reader.hpp"

namespace scalescope::cli {

namespace {

struct ImportTraceOptions {
  std::string file, model, output, host_shape, base = "pytorch-eager", name, software;
  int micro_batch = 0, seq = 0, layers = 0;
  double host_step_time = 0.0, step_time = 0.0;
  std::vector<double> host_process_times;
  bool quiet = false;
  bool ddp_bucket_view = false;
  std::string memory_scaling = "bytes";
  Format format = Format::text;
};

Expected<std::pair<int, int>> parse_shape(const std::string& text) {
  const auto x = text.find('x');
  try {
    if (x != std::string::npos) {
      std::size_t a = 0, b = 0;
      const int mbs = std::stoi(text.substr(0, x), &a), seq = std::stoi(text.substr(x + 1), &b);
      if (a == x && b == text.size() - x - 1 && mbs > 0 && seq > 0) return std::make_pair(mbs, seq);
    }
  } catch (const std::exception&) {
  }
  return input_error("", "--host-shape", "expected MICRO_BATCHxSEQ such as 1x32, got '" + text + "'");
}

int run(const ImportTraceOptions& o) {
  const std::string cmd = "import torch-trace";
  auto model = models::load_model_by_name_or_path(o.model);
  if (!model) return report(cmd, model.error());
  calib::TraceImportOptions opt;
  opt.micro_batch = o.micro_batch;
  opt.seq = o.seq;
  opt.layers = o.layers;
  opt.base = o.base;
  opt.name = o.name;
  opt.software = o.software;
  opt.ddp_bucket_view = o.ddp_bucket_view;
  opt.memory_scaling_sweep = o.memory_scaling == "sweep";
  if (o.step_time > 0.0) opt.step_time_s = o.step_time;
  opt.host_process_times_s = o.host_process_times;
  if (o.host_step_time > 0.0 || !o.host_process_times.empty()) {
    if (o.host_shape.empty()) {
      return report(cmd, input_error("", "--host-shape",
                                     "--host-step-time and --host-process-times need the shape they were measured at"));
    }
    auto shape = parse_shape(o.host_shape);
    if (!shape) return report(cmd, shape.error());
    if (o.host_step_time > 0.0) opt.host_step_time_s = o.host_step_time;
    opt.host_micro_batch = shape->first;
    opt.host_seq = shape->second;
  }
  if (!o.quiet) opt.progress = [&](const std::string& line) { std::cerr << "scalescope " << cmd << ": " << line << "\n"; };
  auto imported = calib::import_torch_trace(o.file, *model, opt);
  if (!imported) return report(cmd, imported.error());
  for (const auto& n : imported->summary.notes) std::cerr << "scalescope " << cmd << ": note: " << n << "\n";
  if (auto w = write_file_atomic(o.output, imported->stack.dump(1) + "\n"); !w) return report(cmd, w.error());
  const Json& imp = imported->stack["import"];
  if (o.format == Format::json) {
    print_stdout(Json{{"stack", o.output}, {"import", imp}, {"host", imported->stack["host"]}}.dump(2));
    return 0;
  }
  const auto& s = imported->summary;
  const double L = o.layers > 0 ? o.layers : model->layers;
  char buf[1024];
  std::snprintf(buf, sizeof buf,
                "wrote %s\n  trace: %zu events, %zu GPU activities in the step, GPU %s\n"
                "  GPU time per layer: forward %.3f ms, backward %.3f ms; embedding/head %.3f ms; optimizer %.3f ms; "
                "communication %.3f ms\n  kernels whose size did not scale (kept as measured): %.3f ms (%.1f%% of %.3f ms)\n"
                "  host per layer and micro-batch %.3f ms, outside the layers %.3f ms per micro-batch + %.3f ms per step "
                "(profiler dilation D = %.2f)\n",
                o.output.c_str(), s.events, s.kernels, s.gpu.c_str(), s.layer_forward_gpu_s / L * 1e3,
                s.layer_backward_gpu_s / L * 1e3, s.edge_gpu_s * 1e3, s.optimizer_gpu_s * 1e3,
                s.comm_gpu_s * 1e3, s.fixed_gpu_s * 1e3, 100.0 * s.fixed_gpu_s / std::max(s.gpu_busy_s, 1e-12),
                s.gpu_busy_s * 1e3,
                imported->stack["host"]["per_layer_microbatch_s"]["module"].get<double>() * 1e3,
                imported->stack["host"]["per_edge_microbatch_s"].get<double>() * 1e3,
                imported->stack["host"]["per_step_s"].get<double>() * 1e3, s.host_dilation);
  print_stdout(buf);
  return 0;
}

}  // namespace

void register_import_trace(CLI::App* import, Context& ctx) {
  auto o = std::make_shared<ImportTraceOptions>();
  CLI::App* sub = import->add_subcommand(
      "torch-trace",
      "Turn a one-GPU PyTorch profiler trace of your own training step (torch.profiler with activities CPU and "
      "CUDA, record_shapes=True, profile_memory=True; export_chrome_trace, plain or .gz) into a stack profile for "
      "--framework: your kernels with their measured times, host cost and memory, scaled to other shapes, plans "
      "and clusters by the calibration profile. See docs/stack-profile.md.");
  sub->add_option("TRACE", o->file, "The trace (Chrome JSON, optionally gzip-compressed)")->required();
  sub->add_option("--model", o->model, "The traced model: catalog name, native model JSON or HF config.json")->required();
  sub->add_option("--micro-batch", o->micro_batch, "Sequences per micro-batch in the traced step")->required();
  sub->add_option("--seq", o->seq, "Sequence length of the traced step (default: the model's seq_len)");
  sub->add_option("--layers", o->layers, "Transformer layers the traced program ran (default: the model's)");
  sub->add_option("--host-step-time", o->host_step_time,
                  "Unprofiled seconds per step of the same program at --host-shape, where the GPU idles (e.g. "
                  "validation/programs/run_steps.py measure --shapes 1x32): sets the host cost, which the profiler "
                  "dilates");
  sub->add_option("--host-process-times", o->host_process_times,
                  "The same timing in several processes, comma-separated (run_steps.py measure --processes N writes "
                  "step_time_s_processes): --host-step-time defaults to their median, and a plan of N ranks waits for "
                  "the expected slowest of N of them (docs/stack-profile.md)")
      ->delimiter(',');
  sub->add_option("--host-shape", o->host_shape,
                  "MICRO_BATCHxSEQ of --host-step-time / --host-process-times, e.g. 1x32");
  sub->add_option("--step-time", o->step_time, "Unprofiled seconds per step at the traced shape (for the record)");
  sub->add_option("--base", o->base, "Built-in stack whose memory rules the import anchors (default pytorch-eager)")
      ->capture_default_str();
  sub->add_option("--name", o->name, "Name of the stack (default: the trace file's stem)");
  sub->add_option("--software", o->software, "Software the trace ran, for the record (e.g. \"torch 2.11.0+cu130\")");
  sub->add_option("-o,--output", o->output, "Stack profile to write (atomically)")->required();
  sub->add_flag("--ddp-bucket-view", o->ddp_bucket_view,
                "The program wraps its model in DDP with gradient_as_bucket_view=True: its gradients are not copied into "
                "and out of the buckets (default: PyTorch's default, False, whose copies the prediction adds for dp > 1)");
  sub->add_option("--memory-scaling", o->memory_scaling,
                  "How the trace's elementwise memory-bound kernels move to other shapes: bytes (linearly in their "
                  "bytes, the default since session 26) or sweep (by the calibration's elementwise sweep, as before; "
                  "reductions and memsets always by the sweep)")
      ->check(CLI::IsMember({"bytes", "sweep"}))
      ->capture_default_str();
  sub->add_flag("-q,--quiet", o->quiet, "No progress on stderr");
  add_format_option(sub, o->format);
  sub->callback([o, &ctx] { ctx.exit_code = run(*o); });
}

}  // namespace scalescope::cli
