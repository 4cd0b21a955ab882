// Plan parsing from "k=v,k=v" text and from JSON, and writing it back.
#include "scalescope/models/plan.hpp"

#include <charconv>
#include <cmath>
#include <map>
#include <system_error>

namespace scalescope::models {

namespace fs = std::filesystem;

std::string_view to_string(Schedule s) {
  switch (s) {
    case Schedule::gpipe:
      return "gpipe";
    case Schedule::one_f_one_b:
      return "1f1b";
    case Schedule::interleaved:
      return "interleaved";
  }
  return "?";
}
std::string_view to_string(Recompute r) {
  switch (r) {
    case Recompute::none:
      return "none";
    case Recompute::selective:
      return "selective";
    case Recompute::full:
      return "full";
  }
  return "?";
}
std::string_view to_string(Precision p) {
  switch (p) {
    case Precision::mixed: return "mixed";
    case Precision::bf16: return "bf16";
    case Precision::fp16: return "fp16";
  }
  return "?";
}

namespace {
Precision precision_of(std::string_view name) {
  return name == "mixed" ? Precision::mixed : name == "bf16" ? Precision::bf16 : Precision::fp16;
}
}  // namespace

namespace {

constexpr const char* kKeys =
    "tp, pp, dp, zero, mbs, gbs, schedule, vpp, recompute, sp, precision, bucket_MB, overlap, seq";

Schedule schedule_of(std::string_view s) {
  return s == "gpipe"  ? Schedule::gpipe
         : s == "1f1b" ? Schedule::one_f_one_b
                       : Schedule::interleaved;
}
Recompute recompute_of(std::string_view s) {
  return s == "none" ? Recompute::none : s == "selective" ? Recompute::selective : Recompute::full;
}

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

/// One key of the text form: reads its value into the plan or throws naming the key.
class TextField {
 public:
  TextField(const std::string& source, std::string key, std::string value)
      : source_(source), key_(std::move(key)), value_(std::move(value)) {}

  [[noreturn]] void fail(const std::string& expected) const {
    throw ErrorException(
        input_error(source_, "key '" + key_ + "'", expected + ", got '" + value_ + "'"));
  }
  int positive_int() const {
    int v = 0;
    auto [p, ec] = std::from_chars(value_.data(), value_.data() + value_.size(), v);
    if (ec != std::errc() || p != value_.data() + value_.size() || v <= 0)
      fail("expected a positive integer");
    return v;
  }
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
  bool boolean() const {
    if (value_ == "true" || value_ == "1") return true;
    if (value_ == "false" || value_ == "0") return false;
    fail("expected true, false, 1 or 0");
  }
  std::string choice(std::initializer_list<std::string_view> choices) const {
    std::string list;
    for (auto c : choices) {
      if (value_ == c) return value_;
      list += (list.empty() ? "" : " | ") + std::string(c);
    }
    fail("expected one of " + list);
  }

 private:
  const std::string& source_;
  std::string key_;
  std::string value_;
};

}  // namespace

Expected<Plan> parse_plan(std::string_view text, const std::string& source) {
  return catch_errors([&] {
    std::map<std::string, std::string> kv;
    std::size_t start = 0;
    while (start <= text.size()) {
      const std::size_t comma = std::min(text.find(',', start), text.size());
      const std::string_view item = trim(text.substr(start, comma - start));
      start = comma + 1;
      if (item.empty()) continue;
      const auto eq = item.find('=');
      if (eq == std::string_view::npos) {
        throw ErrorException(
            input_error(source, "", "expected key=value, got '" + std::string(item) + "'"));
      }
      const std::string key(trim(item.substr(0, eq)));
      const std::string value(trim(item.substr(eq + 1)));
      if (!kv.emplace(key, value).second) {
        throw ErrorException(input_error(source, "key '" + key + "'", "given more than once"));
      }
    }
    Plan p;
    bool have_gbs = false;
    for (const auto& [key, value] : kv) {
      const TextField f(source, key, value);
      if (key == "tp")
        p.tp = f.positive_int();
      else if (key == "pp")
        p.pp = f.positive_int();
      else if (key == "dp")
        p.dp = f.positive_int();
      else if (key == "zero")
        p.zero = f.zero_stage();
      else if (key == "mbs")
        p.mbs = f.positive_int();
      else if (key == "gbs") {
        p.gbs = f.positive_int();
        have_gbs = true;
      } else if (key == "schedule")
        p.schedule = schedule_of(f.choice({"gpipe", "1f1b", "interleaved"}));
      else if (key == "vpp")
        p.vpp = f.positive_int();
      else if (key == "recompute")
        p.recompute = recompute_of(f.choice({"none", "selective", "full"}));
      else if (key == "sp")
        p.sp = f.boolean();
      else if (key == "precision")
        p.precision = precision_of(f.choice({"mixed", "bf16", "fp16"}));
      else if (key == "bucket_MB")
        p.bucket_MB = f.positive_number();
      else if (key == "overlap")
        p.overlap = f.boolean();
      else if (key == "seq")
        p.seq = f.positive_int();
      else
        throw ErrorException(
            input_error(source, "key '" + key + "'",
                        std::string("unknown key (expected one of: ") + kKeys + ")"));
    }
    if (!have_gbs)
      throw ErrorException(
          input_error(source, "", "missing required key 'gbs' (global batch size)"));
    return p;
  });
}

Expected<Plan> plan_from_json(const Json& json, const std::string& file) {
  return catch_errors([&] {
    const JsonCursor c(json, file);
    c.expect_keys({"tp", "pp", "dp", "zero", "mbs", "gbs", "schedule", "vpp", "recompute", "sp",
                   "precision", "bucket_MB", "overlap", "seq"});
    const auto pos_int = [&](std::string_view key, int dflt) {
      auto v = c.find(key);
      if (!v) return dflt;
      const auto i = v->as_positive_int();
      if (i > 1'000'000'000)
        v->fail("expected a positive integer below 1e9, got " + std::to_string(i));
      return static_cast<int>(i);
    };
    Plan p;
    p.tp = pos_int("tp", 1);
    p.pp = pos_int("pp", 1);
    p.dp = pos_int("dp", 1);
    if (auto z = c.find("zero")) {
      if (!z->json().is_number_integer() || z->as_int() < 0 || z->as_int() > 3) {
        z->fail("expected a ZeRO stage 0, 1, 2 or 3, " + JsonCursor::describe(z->json()));
      }
      p.zero = static_cast<int>(z->as_int());
    }
    p.mbs = pos_int("mbs", 1);
    (void)c.at("gbs");  // required: fails with "missing required key 'gbs'"
    p.gbs = pos_int("gbs", 1);
    if (auto s = c.find("schedule"))
      p.schedule = schedule_of(s->as_enum({"gpipe", "1f1b", "interleaved"}));
    p.vpp = pos_int("vpp", 1);
    if (auto r = c.find("recompute"))
      p.recompute = recompute_of(r->as_enum({"none", "selective", "full"}));
    p.sp = c.get_bool("sp", false);
    if (auto pr = c.find("precision")) {
      p.precision = precision_of(pr->as_enum({"mixed", "bf16", "fp16"}));
    }
    if (auto b = c.find("bucket_MB")) p.bucket_MB = b->as_positive_number();
    p.overlap = c.get_bool("overlap", true);
    if (c.find("seq")) p.seq = pos_int("seq", 0);
    return p;
  });
}

Expected<Plan> load_plan(const fs::path& file) {
  auto json = read_json_file(file);
  if (!json) return json.error();
  return plan_from_json(*json, file.string());
}

Expected<Plan> parse_plan_or_file(std::string_view text_or_path) {
  const fs::path p(text_or_path);
  std::error_code ec;
  if (p.extension() == ".json" ||
      (text_or_path.find('=') == std::string_view::npos && fs::exists(p, ec))) {
    return load_plan(p);
  }
  return parse_plan(text_or_path);
}

ModelSpec with_plan_seq(const ModelSpec& spec, const Plan& plan) {
  ModelSpec s = spec;
  if (plan.seq > 0) s.seq_len = plan.seq;
  return s;
}

std::string to_string(const Plan& p) {
  std::string s =
      "tp=" + std::to_string(p.tp) + ",pp=" + std::to_string(p.pp) + ",dp=" + std::to_string(p.dp) +
      ",zero=" + std::to_string(p.zero) + ",mbs=" + std::to_string(p.mbs) +
      ",gbs=" + std::to_string(p.gbs) + ",schedule=" + std::string(to_string(p.schedule)) +
      ",vpp=" + std::to_string(p.vpp) + ",recompute=" + std::string(to_string(p.recompute)) +
      ",sp=" + (p.sp ? "true" : "false") + ",precision=" + std::string(to_string(p.precision)) +
      ",bucket_MB=" + format_double(p.bucket_MB) + ",overlap=" + (p.overlap ? "true" : "false");
  if (p.seq > 0) s += ",seq=" + std::to_string(p.seq);
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
              {"overlap", p.overlap}};
  if (p.seq > 0) j["seq"] = p.seq;
  return j;
}

bool operator==(const Plan& a, const Plan& b) {
  return a.tp == b.tp && a.pp == b.pp && a.dp == b.dp && a.zero == b.zero && a.mbs == b.mbs &&
         a.gbs == b.gbs && a.schedule == b.schedule && a.vpp == b.vpp &&
         a.recompute == b.recompute && a.sp == b.sp && a.precision == b.precision &&
         a.bucket_MB == b.bucket_MB && a.overlap == b.overlap && a.seq == b.seq;
}

}  // namespace scalescope::models
