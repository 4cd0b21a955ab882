// Writing calibration profiles back to JSON, and merging two profiles.
#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "scalescope/calibrate/profile.hpp"

namespace scalescope::calib {

namespace {

/// Integral values as JSON integers (as the GPU program writes byte counts), others as doubles.
Json num(double v) {
  if (std::floor(v) == v && std::fabs(v) < 9.0e15) return Json(static_cast<std::int64_t>(v));
  return Json(v);
}

Json row_json(const CollRow& r) {
  Json j = Json::object();
  j["bytes"] = num(r.bytes);
  j["count"] = num(r.count);
  j["count_per_call"] = num(r.count_per_call);
  j["time_us"] = r.time_us;
  if (r.time_us_min) j["time_us_min"] = *r.time_us_min;
  if (r.time_us_p90) j["time_us_p90"] = *r.time_us_p90;
  j["algbw_GBps"] = r.algbw_GBps;
  j["busbw_GBps"] = r.busbw_GBps;
  if (r.iters) j["iters"] = *r.iters;
  if (r.reps) j["reps"] = *r.reps;
  if (r.host_launch_us) j["host_launch_us"] = *r.host_launch_us;
  if (r.wrong) j["wrong"] = num(*r.wrong);
  return j;
}

Json rows_json(const std::vector<CollRow>& rows) {
  Json a = Json::array();
  for (const auto& r : rows) a.push_back(row_json(r));
  return a;
}

Json entry_json(const CollEntry& e) {
  Json j = Json::object();
  j["op"] = e.op;
  j["nranks"] = e.nranks;
  j["ranks"] = e.ranks;
  if (e.src) j["src"] = *e.src;
  if (e.dst) j["dst"] = *e.dst;
  j["dtype"] = e.dtype;
  j["redop"] = e.redop;
  j["root"] = e.root;
  j["in_place"] = e.in_place;
  j["impl"] = e.impl;
  j["check"] = e.check;
  j["rows"] = rows_json(e.rows);
  if (!e.in_place_rows.empty()) j["in_place_rows"] = rows_json(e.in_place_rows);
  if (!e.source.empty()) j["source"] = e.source;
  if (e.nodes) j["nodes"] = *e.nodes;
  if (e.gpus_per_node) j["gpus_per_node"] = *e.gpus_per_node;
  if (!e.nccl_tests.is_null()) j["nccl_tests"] = e.nccl_tests;
  return j;
}

Json gemm_json(const GemmRow& g) {
  Json j = Json::object();
  j["dtype"] = g.dtype;
  j["transa"] = std::string(1, g.transa);
  j["transb"] = std::string(1, g.transb);
  j["m"] = g.m;
  j["n"] = g.n;
  j["k"] = g.k;
  if (g.time_us) j["time_us"] = *g.time_us;
  if (g.time_us_min) j["time_us_min"] = *g.time_us_min;
  if (g.time_us_p90) j["time_us_p90"] = *g.time_us_p90;
  if (g.tflops) j["tflops"] = *g.tflops;
  if (g.reps) j["reps"] = *g.reps;
  if (!g.label.empty()) j["label"] = g.label;
  if (g.error) j["error"] = *g.error;
  return j;
}

auto entry_key(const CollEntry& e) { return std::make_tuple(e.op, e.ranks, e.src, e.dst, e.dtype); }
auto gemm_key(const GemmRow& g) { return std::make_tuple(g.dtype, g.transa, g.transb, g.m, g.n, g.k); }

/// Rows of `base` and `extra` united by size (extra wins), sorted by size; counts replacements.
std::vector<CollRow> unite_rows(const std::vector<CollRow>& base, const std::vector<CollRow>& extra, int& replaced) {
  std::map<double, CollRow> by_size;
  for (const auto& r : base) by_size[r.bytes] = r;
  for (const auto& r : extra) {
    if (by_size.count(r.bytes) != 0) ++replaced;
    by_size[r.bytes] = r;
  }
  std::vector<CollRow> out;
  for (auto& [bytes, r] : by_size) out.push_back(r);
  return out;
}

}  // namespace

Json to_json(const Profile& p) {
  Json j = p.other;
  j["schema"] = std::string(kProfileSchema);
  j["created_utc"] = p.created_utc ? Json(*p.created_utc) : Json(nullptr);
  j["provenance"] = p.provenance;
  if (!p.collectives_method.empty()) j["collectives_method"] = p.collectives_method;
  Json colls = Json::array();
  for (const auto& e : p.collectives) colls.push_back(entry_json(e));
  j["collectives"] = colls;
  Json gemm = Json::array();
  for (const auto& g : p.gemm) gemm.push_back(gemm_json(g));
  j["gemm"] = gemm;
  return j;
}

Expected<bool> write_profile(const Profile& profile, const std::filesystem::path& file) {
  return write_file_atomic(file, dump_json(to_json(profile)) + "\n");
}

int merge_into(Profile& base, const Profile& extra) {
  int replaced = 0;
  for (const auto& e : extra.collectives) {
    auto it = std::find_if(base.collectives.begin(), base.collectives.end(),
                           [&](const CollEntry& b) { return entry_key(b) == entry_key(e); });
    if (it == base.collectives.end()) {
      base.collectives.push_back(e);
      continue;
    }
    it->rows = unite_rows(it->rows, e.rows, replaced);
    int ignored = 0;
    it->in_place_rows = unite_rows(it->in_place_rows, e.in_place_rows, ignored);
    if (!e.source.empty() && e.source != it->source)
      it->source = it->source.empty() ? e.source : it->source + "; " + e.source;
  }
  for (const auto& g : extra.gemm) {
    auto it = std::find_if(base.gemm.begin(), base.gemm.end(), [&](const GemmRow& b) { return gemm_key(b) == gemm_key(g); });
    if (it == base.gemm.end()) {
      base.gemm.push_back(g);
    } else {
      *it = g;
      ++replaced;
    }
  }
  for (const auto& [key, value] : extra.other.items())
    if (!base.other.contains(key)) base.other[key] = value;
  if (base.collectives_method.empty()) base.collectives_method = extra.collectives_method;
  if (extra.provenance != base.provenance) base.provenance += "; merged with " + extra.provenance;
  return replaced;
}

}  // namespace scalescope::calib
