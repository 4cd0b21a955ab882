// Streaming (SAX) reader of Kineto Chrome traces, plain or gzip: keeps the events the import needs
// (torch_trace.hpp), nothing else. Memory grows with the kept events; a cap stops runaway files.
#include <zlib.h>

#include <array>
#include <cmath>
#include <istream>
#include <streambuf>
#include <unordered_map>

#include "torch_trace_impl.hpp"

namespace scalescope::calib::trace {

namespace {

/// A std::streambuf over a zlib gzFile (which reads plain files as they are).
class GzBuf : public std::streambuf {
 public:
  explicit GzBuf(gzFile f) : f_(f) {}
  std::size_t bytes() const { return bytes_; }

 protected:
  int_type underflow() override {
    const int n = gzread(f_, buf_.data(), static_cast<unsigned>(buf_.size()));
    if (n <= 0) return traits_type::eof();
    bytes_ += static_cast<std::size_t>(n);
    setg(buf_.data(), buf_.data(), buf_.data() + n);
    return traits_type::to_int_type(buf_[0]);
  }

 private:
  gzFile f_;
  std::array<char, 1 << 16> buf_{};
  std::size_t bytes_ = 0;
};

constexpr std::size_t kMaxKeptEvents = 30'000'000;  // ~3 GB of kept events: far beyond one step of one GPU
constexpr std::size_t kMaxInputs = 64;              // inputs kept per op (the rest are not sizes we use)

enum class Cat : std::uint8_t { none, cpu_op, user_annotation, runtime, kernel, memcpy, memset, memory };

Cat cat_of(const std::string& c) {
  if (c == "cpu_op") return Cat::cpu_op;
  if (c == "user_annotation") return Cat::user_annotation;
  if (c == "cuda_runtime" || c == "cuda_driver") return Cat::runtime;
  if (c == "kernel") return Cat::kernel;
  if (c == "gpu_memcpy") return Cat::memcpy;
  if (c == "gpu_memset") return Cat::memset;
  return Cat::none;
}

class Handler : public nlohmann::json::json_sax_t {
 public:
  explicit Handler(Events& ev) : ev_(ev) {}
  std::string error;

  bool null() override { return scalar(std::nullopt, nullptr); }
  bool boolean(bool) override { return scalar(std::nullopt, nullptr); }
  bool number_integer(number_integer_t v) override { return scalar(static_cast<double>(v), nullptr); }
  bool number_unsigned(number_unsigned_t v) override { return scalar(static_cast<double>(v), nullptr); }
  bool number_float(number_float_t v, const string_t&) override { return scalar(v, nullptr); }
  bool string(string_t& s) override { return scalar(std::nullopt, &s); }
  bool binary(binary_t&) override { return true; }
  bool key(string_t& k) override {
    key_ = k;
    return true;
  }
  bool start_object(std::size_t) override {
    push(false);
    if (depth_ == 3 && in_events_) begin_event();
    if (depth_ == 3 && in_devices_ && ev_.gpu_name.empty()) device_obj_ = true;
    if (depth_ == 4 && in_event_ && frames_[3].key == "args") in_args_ = true;
    return true;
  }
  bool end_object() override {
    if (depth_ == 4 && in_args_) in_args_ = false;
    if (depth_ == 3 && in_event_) {
      if (!end_event()) return false;
    }
    if (depth_ == 3) device_obj_ = false;
    pop();
    return true;
  }
  bool start_array(std::size_t) override {
    push(true);
    if (depth_ == 2 && frames_[1].key == "traceEvents") in_events_ = true;
    if (depth_ == 2 && frames_[1].key == "deviceProperties") in_devices_ = true;
    if (in_args_ && depth_ == 5 && frames_[4].key == "Input Dims") dims_ = true;
    if (in_args_ && depth_ == 5 && frames_[4].key == "Input type") types_ = true;
    if (dims_ && depth_ == 6) {
      if (op_.inputs.size() < kMaxInputs) op_.inputs.emplace_back();
      cur_ = op_.inputs.size() <= kMaxInputs ? &op_.inputs.back() : nullptr;
      if (cur_) cur_->elements = 1.0;
      tensor_ = 1.0;
    }
    if (dims_ && depth_ == 7 && cur_) {
      if (!cur_->list) cur_->elements = 0.0;
      cur_->list = true;
      tensor_ = 1.0;
    }
    return true;
  }
  bool end_array() override {
    if (dims_ && depth_ == 7 && cur_) cur_->elements += tensor_;
    if (dims_ && depth_ == 6 && cur_ && !cur_->list && cur_->dims.empty()) cur_->elements = 0.0;  // a scalar
    if (dims_ && depth_ == 5) dims_ = false;
    if (types_ && depth_ == 5) types_ = false;
    if (depth_ == 2) in_events_ = in_devices_ = false;
    pop();
    return true;
  }
  bool parse_error(std::size_t pos, const std::string&, const nlohmann::json::exception& e) override {
    error = "malformed JSON at byte " + std::to_string(pos) + ": " + e.what();
    return false;
  }

 private:
  struct Frame {
    bool array = false;
    std::string key;  ///< the key this container was the value of (objects' members)
  };
  void push(bool array) {
    frames_.push_back({array, key_});
    ++depth_;
  }
  void pop() {
    frames_.pop_back();
    --depth_;
    key_.clear();
  }

  void begin_event() {
    in_event_ = true;
    cat_ = Cat::none;
    ph_.clear();
    name_.clear();
    tid_ = 0;
    ts_ = dur_ = 0.0;
    corr_ = seq_ = -1;
    stream_ = -1;
    total_alloc_ = bytes_ = 0.0;
    device_type_ = 0;
    op_ = CpuOp{};
  }

  bool scalar(std::optional<double> num, const std::string* s) {
    if (device_obj_ && depth_ == 3 && key_ == "name" && s) ev_.gpu_name = *s;
    if (!in_event_) return true;
    if (depth_ == 3) {
      if (key_ == "ph" && s) ph_ = *s;
      else if (key_ == "cat" && s) cat_ = cat_of(*s);
      else if (key_ == "name" && s) name_ = *s;
      else if (key_ == "tid") tid_ = num ? static_cast<std::int64_t>(*num) : (s ? static_cast<std::int64_t>(std::hash<std::string>{}(*s) & 0x7fffffff) : 0);
      else if (key_ == "ts" && num) ts_ = *num;
      else if (key_ == "dur" && num) dur_ = *num;
      return true;
    }
    if (in_args_ && depth_ == 4 && num) {
      if (key_ == "correlation") corr_ = static_cast<std::int64_t>(*num);
      else if (key_ == "Sequence number") seq_ = static_cast<std::int64_t>(*num);
      else if (key_ == "stream") stream_ = static_cast<std::int64_t>(*num);
      else if (key_ == "Total Allocated") total_alloc_ = *num;
      else if (key_ == "Bytes") bytes_ = *num;
      else if (key_ == "Device Type") device_type_ = static_cast<int>(*num);
      return true;
    }
    if (dims_ && (depth_ == 6 || depth_ == 7) && cur_ && num) {
      if (depth_ == 6 && cur_->dims.size() < 16) cur_->dims.push_back(static_cast<std::int64_t>(*num));
      if (depth_ == 6) cur_->elements *= *num;
      else tensor_ *= *num;
      return true;
    }
    if (types_ && depth_ == 5 && s) {
      if (type_index_ < op_.inputs.size()) op_.inputs[type_index_].type = *s;
      else if (op_.inputs.size() < kMaxInputs) pending_types_.push_back(*s);
      ++type_index_;
    }
    return true;
  }

  std::uint32_t intern(const std::string& s) {
    auto [it, fresh] = ids_.try_emplace(s, static_cast<std::uint32_t>(ev_.names.size()));
    if (fresh) ev_.names.push_back(s);
    return it->second;
  }

  bool end_event() {
    in_event_ = false;
    ++ev_.events;
    // "Input type" may come before "Input Dims" (keys are written in either order).
    for (std::size_t i = 0; i < pending_types_.size() && i < op_.inputs.size(); ++i) op_.inputs[i].type = pending_types_[i];
    pending_types_.clear();
    type_index_ = 0;
    const bool complete = ph_ == "X";
    if (!std::isfinite(ts_) || !std::isfinite(dur_) || dur_ < 0.0) return true;  // not a usable interval
    switch (cat_) {
      case Cat::cpu_op:
        if (!complete) break;
        op_.name = intern(name_);
        op_.tid = tid_;
        op_.ts = ts_;
        op_.dur = dur_;
        op_.seq = seq_;
        ev_.ops.push_back(std::move(op_));
        break;
      case Cat::user_annotation:
        if (complete) ev_.annotations.push_back({intern(name_), tid_, ts_, dur_});
        break;
      case Cat::runtime:
        if (complete && corr_ >= 0) ev_.launches.push_back({intern(name_), tid_, ts_, dur_, corr_});
        break;
      case Cat::kernel:
      case Cat::memcpy:
      case Cat::memset: {
        if (!complete) break;
        GpuActivity a;
        a.name = intern(name_);
        a.kind = cat_ == Cat::kernel ? GpuActivity::Kind::kernel
                 : cat_ == Cat::memcpy ? GpuActivity::Kind::memcpy : GpuActivity::Kind::memset;
        a.ts = ts_;
        a.dur = dur_;
        a.correlation = corr_;
        a.stream = stream_;
        ev_.gpu.push_back(a);
        break;
      }
      default:
        if (name_ == "[memory]") ev_.memory.push_back({ts_, total_alloc_, bytes_, device_type_});
        break;
    }
    const std::size_t kept = ev_.ops.size() + ev_.launches.size() + ev_.gpu.size() + ev_.memory.size();
    if (kept > kMaxKeptEvents) {
      error = "more than 30 million events: a trace of one training step on one GPU has far fewer; record one "
              "step (torch.profiler.schedule(wait=1, warmup=1, active=1))";
      return false;
    }
    return true;
  }

  Events& ev_;
  std::unordered_map<std::string, std::uint32_t> ids_;
  std::vector<Frame> frames_;
  std::string key_;
  int depth_ = 0;
  bool in_events_ = false, in_devices_ = false, device_obj_ = false, in_event_ = false, in_args_ = false;
  bool dims_ = false, types_ = false;
  Cat cat_ = Cat::none;
  std::string ph_, name_;
  std::int64_t tid_ = 0, corr_ = -1, seq_ = -1, stream_ = -1;
  double ts_ = 0.0, dur_ = 0.0, total_alloc_ = 0.0, bytes_ = 0.0;
  int device_type_ = 0;
  CpuOp op_;
  OpInput* cur_ = nullptr;
  double tensor_ = 1.0;
  std::size_t type_index_ = 0;
  std::vector<std::string> pending_types_;
};

}  // namespace

Expected<Events> read_events(const std::string& file, const std::function<void(const std::string&)>& progress) {
  gzFile f = gzopen(file.c_str(), "rb");
  if (!f) return input_error(file, "", "cannot open the trace (missing or unreadable)");
  gzbuffer(f, 1 << 17);
  Events ev;
  GzBuf buf(f);
  std::istream in(&buf);
  Handler h(ev);
  bool ok = false;
  try {
    ok = nlohmann::json::sax_parse(in, &h, nlohmann::json::input_format_t::json, true, true);
  } catch (const std::exception& e) {  // nlohmann reports through the handler; this is a safety net
    h.error = std::string("cannot parse the trace: ") + e.what();
  }
  int zerr = Z_OK;
  const char* zmsg = gzerror(f, &zerr);
  const std::string zerror = zerr != Z_OK && zerr != Z_STREAM_END ? std::string(zmsg ? zmsg : "") : "";
  gzclose(f);
  if (!zerror.empty()) return input_error(file, "", "cannot decompress the trace: " + zerror);
  if (!ok || !h.error.empty()) {
    return input_error(file, "", h.error.empty() ? "expected a Chrome trace JSON document" : h.error);
  }
  if (progress) {
    progress("read " + std::to_string(buf.bytes() >> 20) + " MiB, " + std::to_string(ev.events) + " events (" +
             std::to_string(ev.ops.size()) + " CPU ops, " + std::to_string(ev.gpu.size()) + " GPU activities)");
  }
  if (ev.events == 0) return input_error(file, "$.traceEvents", "expected a Chrome trace with a traceEvents array");
  return ev;
}

}  // namespace scalescope::calib::trace
