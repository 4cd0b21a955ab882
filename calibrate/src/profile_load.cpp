// Loading and validating calibration profiles (docs/profile-format.md), and finding them by name.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <set>

#include "scalescope/calibrate/profile.hpp"
#include "scalescope/sim/data_files.hpp"

namespace scalescope::calib {

namespace fs = std::filesystem;

namespace {

const std::vector<std::string_view> kOps{"all_reduce", "all_gather", "reduce_scatter", "alltoall",
                                         "broadcast",  "sendrecv",   "sendrecv_pair"};

/// An optional number: absent or null -> nullopt.
std::optional<double> opt_number(const JsonCursor& c, std::string_view key, bool positive) {
  auto e = c.find(key);
  if (!e || e->json().is_null()) return std::nullopt;
  return positive ? e->as_positive_number() : e->as_nonnegative_number();
}

std::optional<int> opt_int(const JsonCursor& c, std::string_view key) {
  auto e = c.find(key);
  if (!e || e->json().is_null()) return std::nullopt;
  const auto v = e->as_positive_int();
  if (v > 1'000'000'000) e->fail("expected a count below 1e9, " + JsonCursor::describe(e->json()));
  return static_cast<int>(v);
}

CollRow read_coll_row(const JsonCursor& c) {
  c.expect_keys({"bytes", "count", "count_per_call", "time_us", "time_us_min", "time_us_p90", "algbw_GBps",
                 "busbw_GBps", "iters", "reps", "host_launch_us", "wrong"});
  CollRow r;
  // Plausible ranges as for nccl-tests logs (docs/plausible-ranges.md): sizes up to 2^50 bytes, times
  // from 1 ns to 1e9 us per call, bandwidths up to 1e5 GB/s; a fit on 1e-300 us rows gave infinities.
  r.bytes = c.at("bytes").as_number_in(1.0, 1125899906842624.0);
  r.count = c.at("count").as_number_in(0.0, 1125899906842624.0);
  r.count_per_call = c.find("count_per_call") ? c.at("count_per_call").as_number_in(0.0, 1125899906842624.0) : r.count;
  r.time_us = c.at("time_us").as_number_in(1e-3, 1e9);
  r.time_us_min = opt_number(c, "time_us_min", true);
  r.time_us_p90 = opt_number(c, "time_us_p90", true);
  r.algbw_GBps = c.at("algbw_GBps").as_number_in(0.0, 1e5);
  r.busbw_GBps = c.at("busbw_GBps").as_number_in(0.0, 1e5);
  r.iters = opt_int(c, "iters");
  r.reps = opt_int(c, "reps");
  r.host_launch_us = opt_number(c, "host_launch_us", false);
  r.wrong = opt_number(c, "wrong", false);
  return r;
}

std::vector<CollRow> read_rows(const JsonCursor& c) {
  std::vector<CollRow> rows;
  for (const auto& item : c.items()) rows.push_back(read_coll_row(item));
  return rows;
}

CollEntry read_coll_entry(const JsonCursor& c) {
  c.expect_keys({"op", "nranks", "ranks", "src", "dst", "dtype", "redop", "root", "in_place", "impl", "check", "rows",
                 "in_place_rows", "source", "nodes", "gpus_per_node", "nccl_tests"});
  CollEntry e;
  auto op = c.at("op");
  std::string ops;
  for (auto o : kOps) ops += (ops.empty() ? "" : ", ") + std::string(o);
  e.op = op.as_string();
  if (std::find(kOps.begin(), kOps.end(), e.op) == kOps.end())
    op.fail("expected one of " + ops + ", " + JsonCursor::describe(op.json()));
  const auto nranks = c.at("nranks");
  const auto n = nranks.as_positive_int();
  if (n > 1'000'000) nranks.fail("expected at most 1000000 ranks, " + JsonCursor::describe(nranks.json()));
  e.nranks = static_cast<int>(n);
  const auto ranks = c.at("ranks");
  std::set<std::int64_t> seen;
  for (const auto& r : ranks.items()) {
    const auto v = r.as_int_in(0, 1 << 24);  // checked before narrowing to int
    if (!seen.insert(v).second) r.fail("rank " + std::to_string(v) + " is listed twice");
    e.ranks.push_back(static_cast<int>(v));
  }
  if (static_cast<int>(e.ranks.size()) != e.nranks)
    ranks.fail("expected " + std::to_string(e.nranks) + " ranks (nranks), got " + std::to_string(e.ranks.size()));
  if (e.op == "sendrecv_pair") {
    const auto src = c.at("src").as_int_in(0, 1 << 24), dst = c.at("dst").as_int_in(0, 1 << 24);
    if (src == dst) c.at("dst").fail("expected a rank other than src");
    if (src >= e.nranks || dst >= e.nranks) c.fail("src and dst must be ranks below nranks");
    e.src = static_cast<int>(src);
    e.dst = static_cast<int>(dst);
  } else if (c.has("src") || c.has("dst")) {
    c.fail("src and dst are only allowed for sendrecv_pair");
  }
  e.dtype = c.get_string("dtype", "float");
  e.redop = c.get_string("redop", "none");
  if (auto root = c.find("root")) e.root = static_cast<int>(root->as_int_in(-1, 1 << 24));
  e.in_place = c.get_bool("in_place", false);
  e.impl = c.get_string("impl", "");
  e.check = c.get_string("check", "passed");
  if (e.check != "passed" && e.check.rfind("FAILED", 0) != 0 && e.check.rfind("not checked", 0) != 0)
    c.at("check").fail("expected \"passed\", \"FAILED: ...\" or \"not checked ...\", " +
                       JsonCursor::describe(c.at("check").json()));
  e.rows = read_rows(c.at("rows"));
  if (auto ip = c.find("in_place_rows")) e.in_place_rows = read_rows(*ip);
  e.source = c.get_string("source", "");
  e.nodes = opt_int(c, "nodes");
  e.gpus_per_node = opt_int(c, "gpus_per_node");
  if (e.nodes && e.gpus_per_node && std::int64_t{*e.nodes} * *e.gpus_per_node != e.nranks)
    c.fail("nodes x gpus_per_node (" + std::to_string(*e.nodes) + " x " + std::to_string(*e.gpus_per_node) +
           ") must equal nranks (" + std::to_string(e.nranks) + ")");
  if (auto nt = c.find("nccl_tests")) {
    nt->expect_object();
    e.nccl_tests = nt->json();
  }
  return e;
}

std::optional<double> opt_time(const JsonCursor& c, std::string_view key) { return opt_number(c, key, true); }

GemmRow read_gemm_row(const JsonCursor& c) {
  c.expect_keys({"dtype", "transa", "transb", "m", "n", "k", "time_us", "time_us_min", "time_us_p90", "tflops", "reps",
                 "label", "error"});
  GemmRow g;
  g.dtype = c.at("dtype").as_enum({"bf16", "fp16", "tf32", "fp32", "fp8_e4m3", "fp8_e4m3_fast"});
  g.transa = c.at("transa").as_enum({"N", "T"})[0];
  g.transb = c.at("transb").as_enum({"N", "T"})[0];
  // Up to 2^20 each, so 2*m*n*k stays inside 64 bits (docs/plausible-ranges.md).
  g.m = c.at("m").as_int_in(1, 1 << 20);
  g.n = c.at("n").as_int_in(1, 1 << 20);
  g.k = c.at("k").as_int_in(1, 1 << 20);
  g.label = c.get_string("label", "");
  if (auto e = c.find("error")) g.error = e->as_string();
  g.time_us = opt_time(c, "time_us");
  g.time_us_min = opt_time(c, "time_us_min");
  g.time_us_p90 = opt_time(c, "time_us_p90");
  g.tflops = opt_number(c, "tflops", false);
  g.reps = opt_int(c, "reps");
  if (!g.error && !g.time_us) c.fail("a GEMM row needs time_us (or error when it could not be timed)");
  return g;
}

void expect_type(const JsonCursor& root, std::string_view key, bool object) {
  if (auto e = root.find(key)) {
    if (object) e->expect_object();
    else e->expect_array();
  }
}

}  // namespace

std::string Profile::name() const { return file.empty() ? std::string("<profile>") : fs::path(file).stem().string(); }

std::string Profile::gpu_name() const {
  if (auto it = other.find("gpus"); it != other.end() && it->is_array() && !it->empty()) {
    const Json& g = (*it)[0];
    if (g.is_object() && g.contains("name") && g["name"].is_string()) return g["name"].get<std::string>();
  }
  for (const auto& e : collectives) {
    if (!e.nccl_tests.is_object() || !e.nccl_tests.contains("devices")) continue;
    const Json& d = e.nccl_tests["devices"];
    if (d.is_array() && !d.empty() && d[0].contains("name") && d[0]["name"].is_string())
      return d[0]["name"].get<std::string>();
  }
  return {};
}

std::optional<double> Profile::memory_number(std::string_view key) const {
  auto it = other.find("memory");
  if (it == other.end() || !it->is_object()) return std::nullopt;
  auto v = it->find(key);
  if (v == it->end() || !v->is_number()) return std::nullopt;
  return v->get<double>();
}

Expected<Profile> profile_from_json(const Json& doc, std::string source) {
  return catch_errors([&]() -> Profile {
    const JsonCursor root(doc, source);
    root.expect_keys({"schema", "created_utc", "tool", "host", "versions", "environment", "environment_notes",
                      "nvidia_smi_query", "gpus", "topology", "collectives_method", "collectives", "p2p", "gemm",
                      "gemm_meta", "memory", "status", "provenance", "import", "attention", "interference", "health",
                      "mamba", "power"});
    const auto schema = root.at("schema");
    if (schema.as_string() != kProfileSchema)
      schema.fail("expected \"" + std::string(kProfileSchema) + "\", " + JsonCursor::describe(schema.json()));
    Profile p;
    p.file = source;
    if (auto c = root.find("created_utc"); c && !c->json().is_null()) p.created_utc = c->as_string();
    p.provenance = root.get_string("provenance", "measured");
    if (p.provenance.empty()) root.at("provenance").fail("expected a non-empty string");
    p.collectives_method = root.get_string("collectives_method", "");
    for (auto key : {"tool", "host", "versions", "environment", "nvidia_smi_query", "topology", "memory", "status",
                     "import", "interference", "health"})
      expect_type(root, key, true);
    for (auto key : {"environment_notes", "gpus", "p2p", "gemm_meta"}) expect_type(root, key, false);
    if (auto c = root.find("collectives"))
      for (const auto& item : c->items()) p.collectives.push_back(read_coll_entry(item));
    if (auto g = root.find("gemm"))
      for (const auto& item : g->items()) p.gemm.push_back(read_gemm_row(item));
    for (const auto& [key, value] : doc.items()) {
      if (key == "schema" || key == "created_utc" || key == "provenance" || key == "collectives_method" ||
          key == "collectives" || key == "gemm")
        continue;
      p.other[key] = value;
    }
    return p;
  });
}

Expected<Profile> load_profile(const fs::path& file) {
  auto doc = read_json_file(file);
  if (!doc) return doc.error();
  return profile_from_json(*doc, file.string());
}

std::vector<std::string> available_profile_names() { return available_data_names("calibrate/profiles"); }

Expected<Profile> load_profile_by_name_or_path(std::string_view name_or_path) {
  const std::string s(name_or_path);
  if (looks_like_path(s)) return load_profile(s);
  if (const auto f = find_data_file("calibrate/profiles", s)) {
    auto doc = read_json_file(f->path);
    if (!doc) return doc.error();
    return profile_from_json(*doc, f->label);
  }
  std::string list;
  for (const auto& n : available_profile_names()) list += (list.empty() ? "" : ", ") + n;
  return input_error(s, "", "no such profile file, and no built-in profile of that name (available: " +
                                (list.empty() ? std::string("none") : list) + ")");
}

}  // namespace scalescope::calib
