// Plan -> pipeline layout: even, uneven first / last stages, or a Megatron layout string (rules in
// pipeline_layout.hpp), and the nearest valid uneven settings.
#include "scalescope/models/pipeline_layout.hpp"

#include <algorithm>
#include <cmath>

namespace scalescope::models {

namespace {

[[noreturn]] void reject(const std::string& key, const std::string& message) {
  throw ErrorException(input_error("plan", key, message));
}

std::string kv(const char* key, long long v) { return std::string(key) + "=" + std::to_string(v); }

/// Unrolls "(...)*n" groups (innermost first) and "x*n" repeats; drops commas.
std::string unroll(std::string_view layout) {
  std::string s;
  for (char c : layout) {
    if (c != ',' && c != ' ') s += c;
  }
  auto count_at = [&](std::size_t i, std::size_t& end) {
    if (i >= s.size() || s[i] != '*') reject("pp_layout", "expected '*' and a count after ')' in '" + s + "'");
    end = i + 1;
    long long n = 0;
    while (end < s.size() && s[end] >= '0' && s[end] <= '9' && n < 100000) n = n * 10 + (s[end++] - '0');
    if (end == i + 1 || n <= 0 || n >= 100000) reject("pp_layout", "expected a repeat count 1..99999 in '" + s + "'");
    return static_cast<std::size_t>(n);
  };
  for (std::size_t close; (close = s.find(')')) != std::string::npos;) {
    const std::size_t open = s.rfind('(', close);
    if (open == std::string::npos) reject("pp_layout", "')' without '(' in '" + s + "'");
    std::size_t end = 0;
    const std::size_t n = count_at(close + 1, end);
    const std::string group = s.substr(open + 1, close - open - 1);
    std::string rep;
    for (std::size_t i = 0; i < n && rep.size() < 1'000'000; ++i) rep += group;
    s = s.substr(0, open) + rep + s.substr(end);
  }
  if (s.find('(') != std::string::npos) reject("pp_layout", "'(' without ')' in '" + std::string(layout) + "'");
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '*') {
      if (out.empty()) reject("pp_layout", "'*' without a character before it");
      std::size_t end = 0;
      const std::size_t n = count_at(i, end);
      out.append(std::min<std::size_t>(n - 1, 1'000'000), out.back());
      i = end - 1;
    } else {
      out += s[i];
    }
  }
  return out;
}

}  // namespace

Expected<std::vector<int>> parse_pp_layout(std::string_view layout) {
  return catch_errors([&] {
    const std::string s = unroll(layout);
    std::vector<int> layers{0};
    std::size_t entry_start = 0;
    for (std::size_t i = 0; i < s.size(); ++i) {
      const char c = s[i];
      if (c == '|') {
        layers.push_back(0);
        entry_start = i + 1;
      } else if (c == 't') {
        ++layers.back();
      } else if (c == 'E') {
        if (layers.size() != 1 || i != entry_start) reject("pp_layout", "'E' (embedding) must open the first entry");
      } else if (c == 'L') {
        if (s.find('|', i) != std::string::npos || i + 1 != s.size()) {
          reject("pp_layout", "'L' (loss) must close the last entry");
        }
      } else {
        reject("pp_layout", std::string("unknown layer character '") + c + "' (expected t, E, L, '|', '*n', '(...)*n')");
      }
    }
    return layers;
  });
}

std::vector<std::pair<int, int>> nearest_uneven_splits(int layers, int pp, int vpp, int count) {
  std::vector<std::pair<int, int>> out;
  // Only F and L within kWindow chunks of the even share are tried (exact for models of up to ~1,000 layers:
  // a pair outside scores worse than any inside), so a model of 10^9 layers costs milliseconds, not hours.
  constexpr long long kWindow = 1024;
  const long long share = pp > 0 ? layers / pp : 0, reach = kWindow * std::max(vpp, 1);
  const int lo = static_cast<int>(std::max<long long>(vpp, (share - reach) / std::max(vpp, 1) * std::max(vpp, 1)));
  const int hi = static_cast<int>(std::min<long long>(layers, share + reach));
  if (pp < 3 || layers <= 0 || vpp <= 0) {
    if (pp == 2 && vpp > 0) {
      for (int f = lo; f < layers && f <= hi; f += vpp) {
        if ((layers - f) % vpp == 0) out.push_back({f, layers - f});
      }
    }
  } else {
    const int middle = pp - 2;
    for (int f = lo; f < layers && f <= hi; f += vpp) {
      for (int l = lo; f + l < layers && l <= hi; l += vpp) {
        const int rest = layers - f - l;
        if (rest % middle == 0 && (rest / middle) % vpp == 0) out.push_back({f, l});
      }
    }
  }
  const double even = static_cast<double>(layers) / pp;
  auto score = [&](const std::pair<int, int>& p) {
    return std::pair{std::max(std::fabs(p.first - even), std::fabs(p.second - even)), p.first + p.second};
  };
  std::stable_sort(out.begin(), out.end(), [&](const auto& a, const auto& b) { return score(a) < score(b); });
  if (out.size() > static_cast<std::size_t>(count)) out.resize(static_cast<std::size_t>(count));
  return out;
}

namespace {

std::string suggestions(const ModelSpec& m, const Plan& p) {
  std::string s;
  for (auto [f, l] : nearest_uneven_splits(m.layers, p.pp, p.vpp)) {
    s += (s.empty() ? "" : " or ") + kv("first_stage_layers", f) + "," + kv("last_stage_layers", l);
  }
  // The nearest pp below and above (within 4,096 stages) whose pp*vpp divides the layers, at 64 bits.
  const auto divides = [&](long long pp) { return pp >= 1 && pp * p.vpp <= m.layers && m.layers % (pp * p.vpp) == 0; };
  long long below = p.pp - 1, above = p.pp + 1;
  while (below > 1 && below > p.pp - 4096LL && !divides(below)) --below;
  while (above <= m.layers && above < p.pp + 4096LL && !divides(above)) ++above;
  if (divides(below)) s += (s.empty() ? "" : " or ") + kv("pp", below);
  if (divides(above)) s += (s.empty() ? "" : " or ") + kv("pp", above);
  return s.empty() ? "" : "; nearest valid settings: " + s;
}

PipelineLayout uneven(const ModelSpec& m, const Plan& p) {
  const int F = p.first_stage_layers, L = p.last_stage_layers, V = p.vpp;
  for (auto [key, v] : {std::pair{"first_stage_layers", F}, {"last_stage_layers", L}}) {
    if (v > m.layers) reject(key, kv(key, v) + " exceeds the model's " + kv("layers", m.layers));
    if (v > 0 && v % V != 0) reject(key, kv(key, v) + " is not divisible by " + kv("vpp", V) + " (Megatron-Core rule)");
  }
  if (p.pp == 1) reject("first_stage_layers", "first_stage_layers / last_stage_layers need pp > 1");
  const int middle_stages = p.pp - (F > 0 ? 1 : 0) - (L > 0 ? 1 : 0);
  const int middle_layers = m.layers - F - L;
  if (middle_layers < 0 || (middle_layers > 0) != (middle_stages > 0) ||
      (middle_stages > 0 && middle_layers % middle_stages != 0) ||
      (middle_stages > 0 && (middle_layers / middle_stages) % V != 0)) {
    reject(F > 0 ? "first_stage_layers" : "last_stage_layers",
           kv("first_stage_layers", F) + "," + kv("last_stage_layers", L) + " leaves " + std::to_string(middle_layers) +
               " layers for " + std::to_string(middle_stages) + " middle stage(s) of " + kv("vpp", V) + " chunk(s) (" +
               kv("layers", m.layers) + ", " + kv("pp", p.pp) + ")" + suggestions(m, p));
  }
  std::vector<int> per_stage(static_cast<std::size_t>(p.pp), middle_stages > 0 ? middle_layers / middle_stages : 0);
  if (F > 0) per_stage.front() = F;
  if (L > 0) per_stage.back() = L;
  PipelineLayout layout{p.pp, std::vector<int>(static_cast<std::size_t>(p.pp * V), 0)};
  for (int c = 0; c < p.pp * V; ++c) layout.layers_per_chunk[static_cast<std::size_t>(c)] = per_stage[static_cast<std::size_t>(c % p.pp)] / V;
  return layout;
}

}  // namespace

Expected<PipelineLayout> plan_layout(const ModelSpec& m, const Plan& p) {
  return catch_errors([&] {
    if (!p.pp_layout.empty()) {
      if (p.first_stage_layers > 0 || p.last_stage_layers > 0) {
        reject("pp_layout", "pp_layout cannot be combined with first_stage_layers / last_stage_layers (Megatron-Core rule)");
      }
      std::vector<int> chunks = parse_pp_layout(p.pp_layout).take_or_throw();
      if (static_cast<int>(chunks.size()) != p.pp * p.vpp) {
        reject("pp_layout", "pp_layout has " + std::to_string(chunks.size()) + " entries, expected pp*vpp=" +
                                std::to_string(p.pp * p.vpp) + " (" + kv("pp", p.pp) + ", " + kv("vpp", p.vpp) + ")");
      }
      long long total = 0;
      for (int c : chunks) total += c;
      if (total != m.layers) {
        reject("pp_layout", "pp_layout places " + std::to_string(total) + " layers, the model has " + kv("layers", m.layers));
      }
      return PipelineLayout{p.pp, std::move(chunks)};
    }
    if (p.first_stage_layers > 0 || p.last_stage_layers > 0) return uneven(m, p);
    if (m.layers % (p.pp * p.vpp) != 0) {
      if (p.vpp > 1) {
        reject("vpp", "pp*vpp=" + std::to_string(p.pp * p.vpp) + " does not divide " + kv("layers", m.layers) + suggestions(m, p));
      }
      reject("pp", kv("pp", p.pp) + " does not divide " + kv("layers", m.layers) + suggestions(m, p));
    }
    return even_layout(m, p.pp, p.vpp);
  });
}

PipelineLayout layout_of(const ModelSpec& spec, const Plan& plan) {
  auto l = plan_layout(spec, plan);
  return l ? std::move(l).value() : even_layout(spec, plan.pp, plan.vpp);
}

}  // namespace scalescope::models
