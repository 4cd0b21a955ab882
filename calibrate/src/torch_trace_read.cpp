// Streaming (SAX) reader of Kineto Chrome traces, plain or gzip: keeps the events the import needs
// (torch_trace.hpp), nothing else. Regular files only (a FIFO or device is refused without blocking); memory and
// time are bounded by the limits below, each named in its error.
#include <unistd.h>
#include <zlib.h>

#include <array>
#include <cmath>
#include <istream>
#include <limits>
#include <streambuf>
#include <unordered_map>

#include "scalescope/sim/file_io.hpp"
#include "torch_trace_impl.hpp"

namespace scalescope::calib::trace {

namespace {

// Limits. A one-step, one-GPU trace of a 0.5B model (validation/session9) is 3 MB of JSON with 10,426 events, of
// which 6,000 are kept; an 80-layer model traced the same way keeps ~100x that. Each limit is far above a real
// trace and far below what would exhaust a machine.
constexpr std::uint64_t kMaxTraceBytes = std::uint64_t{4} << 30;  // JSON text read (after gunzip): ~1 min to parse
constexpr std::size_t kMaxKeptEvents = 4'000'000;                 // events kept for the analysis
constexpr std::size_t kMaxKeptBytes = std::size_t{1} << 30;       // their memory (estimated below)
constexpr std::size_t kMaxInputs = 64;                            // inputs kept per op (the rest are not sizes we use)
constexpr std::size_t kMaxTokenBytes = std::size_t{1} << 20;      // one string or number (kernel names: a few KiB)
constexpr int kMaxDepth = kMaxJsonDepth;                          // nesting (Kineto nests 7 levels)

/// A number from the trace as an integer id, or `absent` when it is not one an int64 holds (a double beyond 2^63
/// would be undefined behaviour to convert).
std::int64_t to_id(double v, std::int64_t absent = -1) {
  return std::isfinite(v) && std::fabs(v) < 9.2e18 ? static_cast<std::int64_t>(v) : absent;
}

/// A std::streambuf over a zlib gzFile (which reads plain files as they are). It ends the input (the parser then
/// reports it as cut short and read_events() names the limit instead) after kMaxTraceBytes, or at a string or number
/// token longer than kMaxTokenBytes, which nlohmann's lexer would otherwise hold in memory whole.
class GzBuf : public std::streambuf {
 public:
  explicit GzBuf(gzFile f) : f_(f) {}
  std::uint64_t bytes() const { return bytes_; }
  bool too_large() const { return too_large_; }
  bool token_too_long() const { return token_too_long_; }

 protected:
  int_type underflow() override {
    if (too_large_ || token_too_long_) return traits_type::eof();
    if (bytes_ >= kMaxTraceBytes) {
      too_large_ = true;
      return traits_type::eof();
    }
    const int n = gzread(f_, buf_.data(), static_cast<unsigned>(buf_.size()));
    if (n <= 0) return traits_type::eof();
    if (!scan(static_cast<std::size_t>(n))) {
      token_too_long_ = true;
      return traits_type::eof();
    }
    bytes_ += static_cast<std::uint64_t>(n);
    setg(buf_.data(), buf_.data(), buf_.data() + n);
    return traits_type::to_int_type(buf_[0]);
  }

 private:
  /// Tracks the length of the token being read (inside a string, or a run of non-structural characters outside).
  bool scan(std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
      const char c = buf_[i];
      if (in_string_) {
        if (escape_) escape_ = false;
        else if (c == '\\') escape_ = true;
        else if (c == '"') in_string_ = false, run_ = 0;
      } else if (c == '"') {
        in_string_ = true;
        run_ = 0;
      } else if (c == ',' || c == ':' || c == '[' || c == ']' || c == '{' || c == '}' || c == ' ' || c == '\n' ||
                 c == '\r' || c == '\t') {
        run_ = 0;
      }
      if (++run_ > kMaxTokenBytes) return false;
    }
    return true;
  }

  gzFile f_;
  std::array<char, 1 << 16> buf_{};
  std::uint64_t bytes_ = 0;
  std::size_t run_ = 0;
  bool in_string_ = false, escape_ = false, too_large_ = false, token_too_long_ = false;
};

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
    if (!push(false)) return false;
    if (depth_ == 3 && in_events_) begin_event();
    if (depth_ == 3 && in_devices_ && ev_.gpu_name.empty()) device_obj_ = true;
    if (depth_ == 4 && in_event_ && frames_[3].key == "args") in_args_ = true;
    if (dims_ && depth_ == 6) cur_ = kNoInput;  // an object where an input's dims belong: no input
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
    if (!push(true)) return false;
    if (depth_ == 2 && frames_[1].key == "traceEvents") in_events_ = true;
    if (depth_ == 2 && frames_[1].key == "deviceProperties") in_devices_ = true;
    if (in_args_ && depth_ == 5 && frames_[4].key == "Input Dims") dims_ = true;
    if (in_args_ && depth_ == 5 && frames_[4].key == "Input type") types_ = true;
    if (dims_ && depth_ == 5) cur_ = kNoInput;
    if (dims_ && depth_ == 6) {
      if (op_.inputs.size() < kMaxInputs) op_.inputs.emplace_back();
      cur_ = op_.inputs.size() - 1;
      op_.inputs[cur_].elements = 1.0;
      tensor_ = 1.0;
    }
    if (OpInput* in = dims_ && depth_ == 7 ? current_input() : nullptr) {
      if (!in->list) in->elements = 0.0;
      in->list = true;
      tensor_ = 1.0;
    }
    return true;
  }
  bool end_array() override {
    if (OpInput* in = dims_ && depth_ == 7 ? current_input() : nullptr) in->elements += tensor_;
    if (OpInput* in = dims_ && depth_ == 6 ? current_input() : nullptr; in && !in->list && in->dims.empty())
      in->elements = 0.0;  // a scalar
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
  bool push(bool array) {
    if (depth_ >= kMaxDepth) {
      error = "malformed JSON: nested deeper than " + std::to_string(kMaxDepth) + " levels (a Kineto trace nests 7)";
      return false;
    }
    frames_.push_back({array, key_});
    ++depth_;
    return true;
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
    cur_ = kNoInput;
  }

  /// The input whose dims are being read: an index, not a pointer, since op_.inputs reallocates and every event
  /// starts a new op_ (a pointer kept across events was a heap use-after-free, found by fuzzing in session 16:
  /// an "Input Dims" entry that is an object holding an array read the previous event's freed input).
  OpInput* current_input() { return cur_ < op_.inputs.size() ? &op_.inputs[cur_] : nullptr; }

  bool scalar(std::optional<double> num, const std::string* s) {
    if (device_obj_ && depth_ == 3 && key_ == "name" && s) ev_.gpu_name = *s;
    if (!in_event_) return true;
    if (depth_ == 3) {
      if (key_ == "ph" && s) ph_ = *s;
      else if (key_ == "cat" && s) cat_ = cat_of(*s);
      else if (key_ == "name" && s) name_ = *s;
      else if (key_ == "tid") tid_ = num ? to_id(*num, 0) : (s ? static_cast<std::int64_t>(std::hash<std::string>{}(*s) & 0x7fffffff) : 0);
      else if (key_ == "ts" && num) ts_ = *num;
      else if (key_ == "dur" && num) dur_ = *num;
      return true;
    }
    if (in_args_ && depth_ == 4 && num) {
      if (key_ == "correlation") corr_ = to_id(*num);
      else if (key_ == "Sequence number") seq_ = to_id(*num);
      else if (key_ == "stream") stream_ = to_id(*num);
      else if (key_ == "Total Allocated") total_alloc_ = *num;
      else if (key_ == "Bytes") bytes_ = *num;
      else if (key_ == "Device Type") device_type_ = *num == 1.0 ? 1 : 0;  // 1: CUDA; nothing else is used
      return true;
    }
    if (OpInput* in = dims_ && (depth_ == 6 || depth_ == 7) && num ? current_input() : nullptr) {
      if (depth_ == 6 && in->dims.size() < 16) in->dims.push_back(to_id(*num));
      if (depth_ == 6) in->elements *= *num;
      else tensor_ *= *num;
      return true;
    }
    if (types_ && depth_ == 5 && s) {
      if (type_index_ < op_.inputs.size()) op_.inputs[type_index_].type = *s;
      else if (pending_types_.size() < kMaxInputs) pending_types_.push_back(*s);
      ++type_index_;
    }
    return true;
  }

  std::uint32_t intern(const std::string& s) {
    auto [it, fresh] = ids_.try_emplace(s, static_cast<std::uint32_t>(ev_.names.size()));
    if (fresh) {
      ev_.names.push_back(s);
      kept_bytes_ += 2 * s.size() + 96;  // the name, its map key and node
    }
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
        kept_bytes_ += sizeof(CpuOp);
        for (const auto& in : op_.inputs) kept_bytes_ += sizeof(OpInput) + 8 * in.dims.size() + in.type.size();
        ev_.ops.push_back(std::move(op_));
        break;
      case Cat::user_annotation:
        if (complete) {
          ev_.annotations.push_back({intern(name_), tid_, ts_, dur_});
          kept_bytes_ += sizeof(Annotation);
        }
        break;
      case Cat::runtime:
        if (complete && corr_ >= 0) {
          ev_.launches.push_back({intern(name_), tid_, ts_, dur_, corr_});
          kept_bytes_ += sizeof(Launch);
        }
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
        kept_bytes_ += sizeof(GpuActivity);
        break;
      }
      default:
        if (name_ == "[memory]") {
          ev_.memory.push_back({ts_, total_alloc_, bytes_, device_type_});
          kept_bytes_ += sizeof(MemoryEvent);
        }
        break;
    }
    const std::size_t kept =
        ev_.ops.size() + ev_.launches.size() + ev_.gpu.size() + ev_.memory.size() + ev_.annotations.size();
    if (kept > kMaxKeptEvents || kept_bytes_ > kMaxKeptBytes) {
      error = "the trace holds more than " + std::string(kept > kMaxKeptEvents ? "4 million events" : "1 GiB of events") +
              " the import keeps (CPU ops, launches, GPU activities, memory events; the limit of this reader): a "
              "trace of one training step on one GPU has far fewer; record one step "
              "(torch.profiler.schedule(wait=1, warmup=1, active=1))";
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
  static constexpr std::size_t kNoInput = static_cast<std::size_t>(-1);
  std::size_t cur_ = kNoInput;  ///< index in op_.inputs of the input whose dims are being read
  double tensor_ = 1.0;
  std::size_t type_index_ = 0;
  std::size_t kept_bytes_ = 0;  ///< estimated memory of what ev_ holds
  std::vector<std::string> pending_types_;
};

}  // namespace

Expected<Events> read_events(const std::string& file, const std::function<void(const std::string&)>& progress) {
  // read_input_file's rules (sim/file_io.hpp), no size limit of its own: the trace is streamed, its JSON text
  // bounded while it is read.
  auto fd = open_input_file(file, std::numeric_limits<std::uint64_t>::max(), "trace file");
  if (!fd) return fd.error();
  gzFile f = gzdopen(*fd, "rb");  // owns the descriptor from here
  if (!f) {
    ::close(*fd);
    return input_error(file, "", "cannot open the trace (out of memory)");
  }
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
  if (buf.token_too_long()) {
    return input_error(file, "", "holds a string or number longer than 1 MiB near byte " + std::to_string(buf.bytes()) +
                                     " (the limit of this reader; Kineto's longest names are a few KiB)");
  }
  if (buf.too_large()) {
    return input_error(file, "", "holds more than 4 GiB of JSON text (after decompression; the limit of this reader): "
                                 "a trace of one training step on one GPU is far smaller; record one step "
                                 "(torch.profiler.schedule(wait=1, warmup=1, active=1))");
  }
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
