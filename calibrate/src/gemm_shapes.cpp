// GEMM shape lists of the GPU calibration program (squares and transformer-layer products).
#include "scalescope/calibrate/gemm_shapes.hpp"

#include <cassert>
#include <map>
#include <tuple>

namespace scalescope::calib {

namespace {
struct DtypeName {
  GemmDtype dtype;
  std::string_view name;
};
constexpr DtypeName kDtypeNames[] = {
    {GemmDtype::bf16, "bf16"}, {GemmDtype::fp8_e4m3, "fp8_e4m3"}, {GemmDtype::fp8_e4m3_fast, "fp8_e4m3_fast"},
    {GemmDtype::fp16, "fp16"}, {GemmDtype::tf32, "tf32"},           {GemmDtype::fp32, "fp32"},
};

void add_squares(std::vector<GemmShape>& out, std::int64_t from, std::int64_t to) {
  for (std::int64_t s = from; s <= to; s *= 2)
    out.push_back(GemmShape{'N', 'N', s, s, s, "square " + std::to_string(s)});
}

void add_grid(std::vector<GemmShape>& out, const std::vector<std::int64_t>& hiddens,
              const std::vector<std::int64_t>& tokens, bool with_backward) {
  for (std::int64_t h : hiddens)
    for (std::int64_t t : tokens)
      for (auto& g : transformer_layer_gemms(h, t, with_backward)) out.push_back(std::move(g));
}
}  // namespace

std::string_view gemm_dtype_name(GemmDtype d) {
  for (const auto& e : kDtypeNames)
    if (e.dtype == d) return e.name;
  assert(false && "gemm_dtype_name: unknown dtype");
  return "unknown";
}

std::optional<GemmDtype> gemm_dtype_from_name(std::string_view name) {
  for (const auto& e : kDtypeNames)
    if (e.name == name) return e.dtype;
  return std::nullopt;
}

std::vector<GemmDtype> all_gemm_dtypes() {
  std::vector<GemmDtype> out;
  for (const auto& e : kDtypeNames) out.push_back(e.dtype);
  return out;
}

std::int64_t swiglu_ffn(std::int64_t hidden) {
  const std::int64_t raw = 8 * hidden / 3;
  return (raw + 255) / 256 * 256;
}

std::vector<GemmShape> transformer_layer_gemms(std::int64_t hidden, std::int64_t tokens,
                                               bool with_backward) {
  struct Layer {
    const char* name;
    std::int64_t in, out;
  };
  const std::int64_t h = hidden;
  const std::int64_t ffn = swiglu_ffn(h);
  const Layer layers[] = {
      {"qkv", h, 3 * h},      {"attn_out", h, h},        {"mlp_up", h, 4 * h},
      {"mlp_down", 4 * h, h}, {"swiglu_up", h, 2 * ffn}, {"swiglu_down", ffn, h},
  };
  const std::string suffix = " h=" + std::to_string(h) + " t=" + std::to_string(tokens);
  std::vector<GemmShape> out;
  for (const Layer& l : layers) {
    out.push_back(GemmShape{'N', 'N', l.out, tokens, l.in, std::string(l.name) + " fwd" + suffix});
    if (with_backward) {
      out.push_back(
          GemmShape{'T', 'N', l.in, tokens, l.out, std::string(l.name) + " dgrad" + suffix});
      out.push_back(
          GemmShape{'N', 'T', l.out, l.in, tokens, std::string(l.name) + " wgrad" + suffix});
    }
  }
  return out;
}

bool backward_only_label(std::string_view label) {
  while (true) {
    const std::size_t bar = label.find(" | ");
    const std::string_view part = label.substr(0, bar);
    if (part.find("dgrad") == std::string_view::npos && part.find("wgrad") == std::string_view::npos) return false;
    if (bar == std::string_view::npos) return true;
    label.remove_prefix(bar + 3);
  }
}

std::vector<GemmShape> gemm_shapes(GemmDtype dtype, bool quick) {
  std::vector<GemmShape> out;
  if (quick) {
    add_squares(out, 1024, 2048);
    add_grid(out, {4096}, {4096}, false);
  } else {
    const std::vector<std::int64_t> hiddens = {2048, 4096, 5120, 8192, 12288};
    const std::vector<std::int64_t> tokens = {2048, 4096, 8192, 16384};
    switch (dtype) {
      case GemmDtype::bf16:
      case GemmDtype::fp8_e4m3:
        add_squares(out, 1024, 16384);
        add_grid(out, hiddens, tokens, true);
        break;
      case GemmDtype::fp8_e4m3_fast:  // Transformer Engine runs only the forward GEMMs this way
      case GemmDtype::fp16:
      case GemmDtype::tf32:
        add_squares(out, 1024, 16384);
        add_grid(out, hiddens, tokens, false);
        break;
      case GemmDtype::fp32:
        add_squares(out, 1024, 8192);
        add_grid(out, {2048, 4096}, {2048, 8192}, false);
        break;
    }
  }
  if (is_fp8(dtype)) {
    for (auto& s : out) {
      s.transa = 'T';
      s.transb = 'N';
    }
  }
  // The same problem can arise twice (square 4096 is attn_out fwd at h = t = 4096; in the fp8 TN
  // layout attn_out fwd and dgrad coincide): time it once, under all its labels.
  std::vector<GemmShape> unique;
  std::map<std::tuple<char, char, std::int64_t, std::int64_t, std::int64_t>, std::size_t> index;
  for (auto& s : out) {
    const auto key = std::make_tuple(s.transa, s.transb, s.m, s.n, s.k);
    const auto it = index.find(key);
    if (it != index.end()) {
      unique[it->second].label += " | " + s.label;
      continue;
    }
    index.emplace(key, unique.size());
    unique.push_back(std::move(s));
  }
  return unique;
}

}  // namespace scalescope::calib
