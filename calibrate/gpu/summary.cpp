// The human-readable summary scalescope-calibrate prints at the end, read back from the profile.
#include <algorithm>
#include <sstream>

#include "sections.hpp"

namespace scalescope::gpu {

namespace {

std::string num(const Json& j, const char* fmt) {
  return j.is_number() ? strf(fmt, j.get<double>()) : std::string("-");
}

std::string text_or_dash(const Json& j) {
  return j.is_string() ? j.get<std::string>() : std::string("-");
}

/// "interference: compute x1.09-1.25 beside collectives, collectives x1.30-1.70 beside compute
/// (9 rows)": the range of each slowdown over the measured rows.
std::string interference_line(const Json& in) {
  if (in.contains("skipped")) return "interference: skipped (" + text_or_dash(in["skipped"]) + ")";
  double k_lo = 0.0, k_hi = 0.0, c_lo = 0.0, c_hi = 0.0;
  int ok = 0, failed = 0;
  for (const auto& r : in.value("rows", Json::array())) {
    const Json k = r.value("compute_slowdown", Json()), c = r.value("coll_slowdown", Json());
    if (!k.is_number() || !c.is_number()) {
      ++failed;
      continue;
    }
    const double kv = k.get<double>(), cv = c.get<double>();
    k_lo = ok == 0 ? kv : std::min(k_lo, kv);
    k_hi = ok == 0 ? kv : std::max(k_hi, kv);
    c_lo = ok == 0 ? cv : std::min(c_lo, cv);
    c_hi = ok == 0 ? cv : std::max(c_hi, cv);
    ++ok;
  }
  std::string line = "interference: ";
  if (ok > 0)
    line += strf("compute x%.2f-%.2f beside collectives, collectives x%.2f-%.2f beside compute ",
                 k_lo, k_hi, c_lo, c_hi);
  line += strf("(%d rows", ok);
  if (failed > 0) line += strf(", %d failed", failed);
  return line + ")";
}

}  // namespace

std::string summary_text(const Json& d) {
  std::ostringstream out;
  out << "== scalescope-calibrate summary ==\n";
  const Json& gpus = d.value("gpus", Json::array());
  const Json& v = d.value("versions", Json::object());
  if (!gpus.empty())
    out << "GPUs: " << gpus.size() << " x " << text_or_dash(gpus[0].value("name", Json()))
        << " (cc " << text_or_dash(gpus[0].value("cc", Json())) << ")";
  else
    out << "GPUs: none";
  out << "; driver " << text_or_dash(v.value("driver", Json())) << ", CUDA runtime "
      << text_or_dash(v.value("cuda_runtime", Json())) << ", NCCL "
      << text_or_dash(v.value("nccl", Json())) << ", cuBLAS "
      << text_or_dash(v.value("cublas", Json())) << "\n";

  const Json& st = d.value("status", Json::object());
  out << "complete: " << (st.value("complete", false) ? "yes" : "no") << "; sections done: ";
  for (const auto& s : st.value("sections_done", Json::array())) out << s.get<std::string>() << " ";
  out << "; errors: " << st.value("errors", Json::array()).size()
      << "; budget exhausted: " << (st.value("budget_exhausted", false) ? "yes" : "no")
      << "; elapsed " << num(st.value("elapsed_s", Json()), "%.1f") << " s\n";
  for (const auto& e : st.value("errors", Json::array()))
    out << "  error [" << text_or_dash(e.value("section", Json())) << "] "
        << text_or_dash(e.value("message", Json())) << "\n";
  for (const auto& s : st.value("budget_skipped", Json::array()))
    out << "  budget: " << s.get<std::string>() << "\n";

  const Json& mem = d.value("memory", Json::object());
  if (!mem.empty())
    out << "memory: D2D copy " << num(mem.value("d2d_copy_GBps", Json()), "%.0f")
        << " GB/s, read/write kernel " << num(mem.value("read_write_kernel_GBps", Json()), "%.0f")
        << " GB/s (read+write), H2D " << num(mem.value("h2d_GBps", Json()), "%.1f") << " GB/s, D2H "
        << num(mem.value("d2h_GBps", Json()), "%.1f") << " GB/s, launch "
        << num(mem.value("launch_overhead_us", Json()), "%.2f") << " us, launch+sync "
        << num(mem.value("launch_sync_us", Json()), "%.2f") << " us\n";

  for (const auto& p : d.value("p2p", Json::array())) {
    out << "p2p " << p.value("mode", "") << " " << p.value("src", -1) << "->" << p.value("dst", -1)
        << ": " << num(p.value("latency_us", Json()), "%.2f") << " us, "
        << num(p.value("bandwidth_GBps", Json()), "%.1f") << " GB/s at largest size\n";
  }

  for (const auto& c : d.value("collectives", Json::array())) {
    const Json& rows = c.value("rows", Json::array());
    out << "coll " << c.value("op", "") << " n=" << c.value("nranks", 0);
    if (c.contains("src")) out << " " << c.value("src", -1) << "->" << c.value("dst", -1);
    out << ": check " << text_or_dash(c.value("check", Json()));
    if (!rows.empty()) {
      out << "; " << num(rows.front().value("time_us", Json()), "%.1f") << " us at "
          << rows.front().value("bytes", 0ull) << " B; busbw "
          << num(rows.back().value("busbw_GBps", Json()), "%.1f") << " GB/s at "
          << rows.back().value("bytes", 0ull) << " B";
    }
    out << "\n";
  }

  for (const auto& m : d.value("gemm_meta", Json::array())) {
    const std::string dt = m.value("dtype", "");
    double best = 0.0;
    for (const auto& g : d.value("gemm", Json::array()))
      if (g.value("dtype", "") == dt && g.contains("tflops"))
        best = std::max(best, g["tflops"].get<double>());
    out << "gemm " << dt << ": check " << text_or_dash(m.value("check", Json())) << ", "
        << m.value("shapes_timed", 0) << "/" << m.value("shapes_planned", 0) << " shapes, best "
        << strf("%.0f", best) << " TFLOP/s";
    if (m.contains("skipped")) out << " (skipped: " << m["skipped"].get<std::string>() << ")";
    out << "\n";
  }

  if (const auto it = d.find("interference"); it != d.end() && it->is_object())
    out << interference_line(*it) << "\n";
  return out.str();
}

}  // namespace scalescope::gpu
