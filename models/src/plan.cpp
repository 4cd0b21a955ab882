// Plan parsing from "k=v,k=v" text and from JSON, and writing it back: one list of keys (plan_keys) read
// by one function (read_key) for both forms.
#include "scalescope/models/plan.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <map>
#include <system_error>

namespace scalescope::models {

namespace fs = std::filesystem;

std::string_view to_string(Schedule s) {
  switch (s) {
    case Schedule::gpipe: return "gpipe";
    case Schedule::one_f_one_b: return "1f1b";
    case Schedule::interleaved: return "interleaved";
  }
  return "?";
}
std::string_view to_string(Recompute r) {
  switch (r) {
    case Recompute::none: return "none";
    case Recompute::selective: return "selective";
    case Recompute::full: return "full";
  }
  return "?";
}
std::string_view to_string(Precision p) {
  switch (p) {
    case Precision::mixed: return "mixed";
    case Precision::bf16: return "bf16";
    case Precision::fp16: return "fp16";
    case Precision::fp8: return "fp8";
  }
  return "?";
}
std::string_view to_string(Fp8Recipe r) {
  switch (r) {
    case Fp8Recipe::delayed: return "delayed";
    case Fp8Recipe::tensorwise: return "tensorwise";
    case Fp8Recipe::blockwise: return "blockwise";
    case Fp8Recipe::mxfp8: return "mxfp8";
  }
  return "?";
}
std::string_view to_string(MoeDispatcher d) {
  switch (d) {
    case MoeDispatcher::alltoall: return "alltoall";
    case MoeDispatcher::allgather: return "allgather";
    case MoeDispatcher::flex: return "flex";
  }
  return "?";
}

std::string_view to_string(OptimizerImpl o) { return o == OptimizerImpl::foreach ? "foreach" : "fused"; }

std::string_view to_string(CrossEntropyFusion c) {
  switch (c) {
    case CrossEntropyFusion::none: return "none";
    case CrossEntropyFusion::native: return "native";
    case CrossEntropyFusion::te: return "te";
  }
  return "?";
}

double moe_imbalance(const ModelSpec& spec, const Plan& plan) {
  if (!spec.is_moe()) return 1.0;
  if (plan.moe_imbalance > 0.0) return plan.moe_imbalance;
  return spec.moe.capacity_factor > 0.0 ? spec.moe.capacity_factor : 1.0;
}

std::string_view to_string(CpComm c) {
  switch (c) {
    case CpComm::p2p: return "p2p";
    case CpComm::a2a: return "a2a";
    case CpComm::allgather: return "allgather";
  }
  return "?";
}

const std::vector<std::string>& plan_keys() {
  static const std::vector<std::string> keys = {
      "tp",        "pp",        "dp",         "zero",        "mbs",         "gbs",
      "schedule",  "vpp",       "recompute",  "sp",          "precision",   "bucket_MB",
      "overlap_grad_reduce",    "cp",         "cp_comm",     "fp8_recipe",  "fp8_params",
      "grad_reduce_in_fp32",    "overlap_param_gather",      "tp_comm_overlap",
      "first_stage_layers",     "last_stage_layers",         "pp_layout",   "seq",
      "ep",        "etp",       "moe_dispatcher",            "moe_imbalance",             "moe_a2a_overlap",
      "lora_rank", "lora_modules",                           "packed_doc_tokens",         "optimizer_impl",
      "cross_entropy_fusion"};
  return keys;
}

namespace {
constexpr std::array<std::pair<int, std::string_view>, 4> kLoraNames{
    {{kLoraQkv, "qkv"}, {kLoraProj, "proj"}, {kLoraFc1, "fc1"}, {kLoraFc2, "fc2"}}};
}  // namespace

std::string lora_modules_text(int mask) {
  std::string s;
  for (const auto& [bit, name] : kLoraNames)
    if (mask & bit) s += (s.empty() ? "" : "+") + std::string(name);
  return s;
}

namespace {

template <class E, std::size_t N>
E enum_of(std::string_view name, const std::array<E, N>& all) {
  for (E e : all) {
    if (to_string(e) == name) return e;
  }
  return all[0];
}
constexpr std::array kSchedules{Schedule::gpipe, Schedule::one_f_one_b, Schedule::interleaved};
constexpr std::array kRecomputes{Recompute::none, Recompute::selective, Recompute::full};
constexpr std::array kPrecisions{Precision::mixed, Precision::bf16, Precision::fp16, Precision::fp8};
constexpr std::array kRecipes{Fp8Recipe::delayed, Fp8Recipe::tensorwise, Fp8Recipe::blockwise, Fp8Recipe::mxfp8};
constexpr std::array kCpComms{CpComm::p2p, CpComm::a2a, CpComm::allgather};
constexpr std::array kDispatchers{MoeDispatcher::alltoall, MoeDispatcher::allgather, MoeDispatcher::flex};
constexpr std::array kOptimizerImpls{OptimizerImpl::fused, OptimizerImpl::foreach};
constexpr std::array kCrossEntropyFusions{CrossEntropyFusion::none, CrossEntropyFusion::native, CrossEntropyFusion::te};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string format_double(double v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

std::string known_keys() {
  std::string list;
  for (const auto& k : plan_keys()) list += (list.empty() ? "" : ", ") + k;
  return "expected one of: " + list;
}

/// The kLora* mask of "qkv+proj+..." (any order, each once); -1 when a name is unknown, repeated or empty.
int lora_mask(std::string_view text) {
  int mask = 0;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t plus = std::min(text.find('+', start), text.size());
    const std::string_view name = trim(text.substr(start, plus - start));
    start = plus + 1;
    int bit = 0;
    for (const auto& [b, n] : kLoraNames)
      if (n == name) bit = b;
    if (bit == 0 || (mask & bit) != 0) return -1;
    mask |= bit;
  }
  return mask;
}

/// One key of the text form: reads its value or throws naming the key.
class TextField {
 public:
  TextField(const std::string& source, std::string key, std::string value)
      : source_(source), key_(std::move(key)), value_(std::move(value)) {}

  [[noreturn]] void fail(const std::string& expected) const {
    throw ErrorException(input_error(source_, "key '" + key_ + "'", expected + ", got '" + value_ + "'"));
  }
  int int_at_least(int lo) const {
    int v = 0;
    auto [p, ec] = std::from_chars(value_.data(), value_.data() + value_.size(), v);
    if (ec != std::errc() || p != value_.data() + value_.size() || v < lo) {
      fail(lo > 0 ? "expected a positive integer" : "expected a non-negative integer");
    }
    return v;
  }
  int positive_int() const { return int_at_least(1); }
  int nonnegative_int() const { return int_at_least(0); }
  int zero_stage() const {
    if (value_ == "0" || value_ == "1" || value_ == "2" || value_ == "3") return value_[0] - '0';
    fail("expected a ZeRO stage 0, 1, 2 or 3");
  }
  double positive_number() const {
    double v = 0;
    auto [p, ec] = std::from_chars(value_.data(), value_.data() + value_.size(), v);
    if (ec != std::errc() || p != value_.data() + value_.size() || !(v > 0) || !std::isfinite(v)) {
      fail("expected a positive number");
    }
    return v;
  }
  double nonnegative_number() const {
    double v = 0;
    auto [p, ec] = std::from_chars(value_.data(), value_.data() + value_.size(), v);
    if (ec != std::errc() || p != value_.data() + value_.size() || !(v >= 0) || !std::isfinite(v)) {
      fail("expected a non-negative number");
    }
    return v;
  }
  bool boolean() const {
    if (value_ == "true" || value_ == "1") return true;
    if (value_ == "false" || value_ == "0") return false;
    fail("expected true, false, 1 or 0");
  }
  std::string text() const { return value_; }
  int lora_modules() const {
    const int m = lora_mask(value_);
    if (m <= 0) fail("expected linear modules joined by '+' from qkv, proj, fc1, fc2 (e.g. qkv+proj+fc1+fc2)");
    return m;
  }
  template <class E, std::size_t N>
  E choice(const std::array<E, N>& all) const {
    std::string list;
    for (E e : all) {
      if (value_ == to_string(e)) return e;
      list += (list.empty() ? "" : " | ") + std::string(to_string(e));
    }
    fail("expected one of " + list);
  }

 private:
  const std::string& source_;
  std::string key_;
  std::string value_;
};

/// One key of the JSON form, with the same readers (errors name the file and the JSON path).
class JsonField {
 public:
  explicit JsonField(JsonCursor c) : c_(std::move(c)) {}
  int positive_int() const {
    const auto i = c_.as_positive_int();
    if (i > 1'000'000'000) c_.fail("expected a positive integer below 1e9, got " + std::to_string(i));
    return static_cast<int>(i);
  }
  int nonnegative_int() const {
    const auto i = c_.as_nonnegative_int();
    if (i > 1'000'000'000) c_.fail("expected an integer below 1e9, got " + std::to_string(i));
    return static_cast<int>(i);
  }
  int zero_stage() const {
    if (!c_.json().is_number_integer() || c_.as_int() < 0 || c_.as_int() > 3) {
      c_.fail("expected a ZeRO stage 0, 1, 2 or 3, " + JsonCursor::describe(c_.json()));
    }
    return static_cast<int>(c_.as_int());
  }
  double positive_number() const { return c_.as_positive_number(); }
  double nonnegative_number() const { return c_.as_nonnegative_number(); }
  bool boolean() const { return c_.as_bool(); }
  std::string text() const { return c_.as_string(); }
  int lora_modules() const {
    const std::string v = c_.as_string();
    const int m = lora_mask(v);
    if (m <= 0)
      c_.fail("expected linear modules joined by '+' from qkv, proj, fc1, fc2 (e.g. \"qkv+proj+fc1+fc2\"), got \"" + v + "\"");
    return m;
  }
  template <class E, std::size_t N>
  E choice(const std::array<E, N>& all) const {
    std::string name = c_.as_string();
    for (E e : all) {
      if (name == to_string(e)) return e;
    }
    std::string list;
    for (E e : all) list += (list.empty() ? "" : ", ") + std::string("\"") + std::string(to_string(e)) + "\"";
    c_.fail("expected one of " + list + ", got \"" + name + "\"");
  }

 private:
  JsonCursor c_;
};

/// Reads `key` into `p` with reader `f` (TextField or JsonField); false for an unknown key.
template <class F>
bool read_key(Plan& p, std::string_view key, const F& f) {
  if (key == "tp") p.tp = f.positive_int();
  else if (key == "pp") p.pp = f.positive_int();
  else if (key == "dp") p.dp = f.positive_int();
  else if (key == "cp") p.cp = f.positive_int();
  else if (key == "zero") p.zero = f.zero_stage();
  else if (key == "mbs") p.mbs = f.positive_int();
  else if (key == "gbs") p.gbs = f.positive_int();
  else if (key == "schedule") p.schedule = f.choice(kSchedules);
  else if (key == "vpp") p.vpp = f.positive_int();
  else if (key == "recompute") p.recompute = f.choice(kRecomputes);
  else if (key == "sp") p.sp = f.boolean();
  else if (key == "precision") p.precision = f.choice(kPrecisions);
  else if (key == "fp8_recipe") p.fp8_recipe = f.choice(kRecipes);
  else if (key == "fp8_params") p.fp8_params = f.boolean();
  else if (key == "grad_reduce_in_fp32") p.grad_reduce_in_fp32 = f.boolean();
  else if (key == "bucket_MB") p.bucket_MB = f.positive_number();
  else if (key == "overlap_grad_reduce" || key == "overlap") p.overlap = f.boolean();
  else if (key == "overlap_param_gather") p.overlap_param_gather = f.boolean();
  else if (key == "tp_comm_overlap") p.tp_comm_overlap = f.boolean();
  else if (key == "cp_comm") p.cp_comm = f.choice(kCpComms);
  else if (key == "first_stage_layers") p.first_stage_layers = f.nonnegative_int();
  else if (key == "last_stage_layers") p.last_stage_layers = f.nonnegative_int();
  else if (key == "pp_layout") p.pp_layout = f.text();
  else if (key == "seq") p.seq = f.positive_int();
  else if (key == "ep") p.ep = f.positive_int();
  else if (key == "etp") p.etp = f.positive_int();
  else if (key == "moe_dispatcher") p.moe_dispatcher = f.choice(kDispatchers);
  else if (key == "moe_imbalance") p.moe_imbalance = f.nonnegative_number();
  else if (key == "moe_a2a_overlap") p.moe_a2a_overlap = f.boolean();
  else if (key == "lora_rank") p.lora_rank = f.nonnegative_int();
  else if (key == "lora_modules") p.lora_modules = f.lora_modules();
  else if (key == "packed_doc_tokens") p.packed_doc_tokens = f.nonnegative_int();
  else if (key == "optimizer_impl") p.optimizer_impl = f.choice(kOptimizerImpls);
  else if (key == "cross_entropy_fusion") p.cross_entropy_fusion = f.choice(kCrossEntropyFusions);
  else return false;
  return true;
}

}  // namespace

Expected<Plan> parse_plan(std::string_view text, const std::string& source) {
  return catch_errors([&] {
    std::map<std::string, std::pair<std::string, std::string>> kv;  // canonical key -> (key as given, value)
    std::size_t start = 0;
    while (start <= text.size()) {
      const std::size_t comma = std::min(text.find(',', start), text.size());
      const std::string_view item = trim(text.substr(start, comma - start));
      start = comma + 1;
      if (item.empty()) continue;
      const auto eq = item.find('=');
      if (eq == std::string_view::npos) {
        throw ErrorException(input_error(source, "", "expected key=value, got '" + std::string(item) + "'"));
      }
      const std::string key(trim(item.substr(0, eq)));
      const std::string canonical = key == "overlap" ? "overlap_grad_reduce" : key;  // the older name
      if (!kv.emplace(canonical, std::pair{key, std::string(trim(item.substr(eq + 1)))}).second) {
        throw ErrorException(input_error(source, "key '" + key + "'", "given more than once"));
      }
    }
    Plan p;
    for (const auto& [canonical, given] : kv) {
      if (!read_key(p, canonical, TextField(source, given.first, given.second))) {
        throw ErrorException(input_error(source, "key '" + given.first + "'", "unknown key (" + known_keys() + ")"));
      }
    }
    if (kv.count("gbs") == 0) {
      throw ErrorException(input_error(source, "", "missing required key 'gbs' (global batch size)"));
    }
    return p;
  });
}

Plan read_plan(const JsonCursor& c) {
  c.expect_object();
  (void)c.at("gbs");  // required: fails with "missing required key 'gbs'"
  Plan p;
  for (const auto& [key, value] : c.members()) {
    if (!read_key(p, key, JsonField(value))) value.fail("unknown key '" + key + "' (" + known_keys() + ")");
  }
  return p;
}

Expected<Plan> plan_from_json(const Json& json, const std::string& file) {
  return catch_errors([&] { return read_plan(JsonCursor(json, file)); });
}

Expected<Plan> load_plan(const fs::path& file) {
  auto json = read_json_file(file);
  if (!json) return json.error();
  return plan_from_json(*json, file.string());
}

Expected<Plan> parse_plan_or_file(std::string_view text_or_path) {
  const fs::path p(text_or_path);
  std::error_code ec;
  if (p.extension() == ".json" || (text_or_path.find('=') == std::string_view::npos && fs::exists(p, ec))) {
    return load_plan(p);
  }
  return parse_plan(text_or_path);
}

ModelSpec with_plan_seq(const ModelSpec& spec, const Plan& plan) {
  ModelSpec s = spec;
  if (plan.seq > 0) s.seq_len = plan.seq;
  return s;
}

Json to_json(const Plan& p) {
  Json j{{"tp", p.tp},
         {"pp", p.pp},
         {"dp", p.dp},
         {"zero", p.zero},
         {"mbs", p.mbs},
         {"gbs", p.gbs},
         {"schedule", std::string(to_string(p.schedule))},
         {"vpp", p.vpp},
         {"recompute", std::string(to_string(p.recompute))},
         {"sp", p.sp},
         {"precision", std::string(to_string(p.precision))},
         {"bucket_MB", p.bucket_MB},
         {"overlap_grad_reduce", p.overlap},
         {"cp", p.cp},
         {"cp_comm", std::string(to_string(p.cp_comm))},
         {"fp8_recipe", std::string(to_string(p.fp8_recipe))},
         {"fp8_params", p.fp8_params},
         {"grad_reduce_in_fp32", p.grad_reduce_in_fp32},
         {"overlap_param_gather", p.overlap_param_gather},
         {"tp_comm_overlap", p.tp_comm_overlap},
         {"first_stage_layers", p.first_stage_layers},
         {"last_stage_layers", p.last_stage_layers},
         {"pp_layout", p.pp_layout}};
  if (p.seq > 0) j["seq"] = p.seq;  // 0: the model's seq_len
  // MoE keys only when set (dense plans read and write as before).
  if (p.ep != 1) j["ep"] = p.ep;
  if (p.etp != 1) j["etp"] = p.etp;
  if (p.moe_dispatcher != MoeDispatcher::alltoall) j["moe_dispatcher"] = std::string(to_string(p.moe_dispatcher));
  if (p.moe_imbalance > 0.0) j["moe_imbalance"] = p.moe_imbalance;
  if (p.moe_a2a_overlap) j["moe_a2a_overlap"] = true;
  // Fine-tuning keys only when set.
  if (p.lora_rank > 0) {
    j["lora_rank"] = p.lora_rank;
    j["lora_modules"] = lora_modules_text(p.lora_modules);
  } else if (p.lora_modules != 0xF) {
    j["lora_modules"] = lora_modules_text(p.lora_modules);
  }
  if (p.packed_doc_tokens > 0) j["packed_doc_tokens"] = p.packed_doc_tokens;
  if (p.optimizer_impl != OptimizerImpl::fused) j["optimizer_impl"] = std::string(to_string(p.optimizer_impl));
  if (p.cross_entropy_fusion != CrossEntropyFusion::none)
    j["cross_entropy_fusion"] = std::string(to_string(p.cross_entropy_fusion));
  return j;
}

std::string to_string(const Plan& p) {
  const Json j = to_json(p);
  std::string s;
  for (const std::string& key : plan_keys()) {
    if (!j.contains(key)) continue;  // seq when the model's is used
    const Json& v = j.at(key);
    std::string text = v.is_string()           ? v.get<std::string>()
                       : v.is_boolean()        ? (v.get<bool>() ? "true" : "false")
                       : v.is_number_integer() ? std::to_string(v.get<long long>())
                                               : format_double(v.get<double>());
    if (key == "pp_layout" && text.empty()) continue;  // empty value: the even layout
    s += (s.empty() ? "" : ",") + key + "=" + text;
  }
  return s;
}

}  // namespace scalescope::models
