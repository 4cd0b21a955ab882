// Strong unit types used at library interfaces: bytes, seconds, bytes per second,
// and the simulator's integer clock (SimTime, nanoseconds).
#pragma once

#include <cmath>
#include <compare>
#include <cstdint>
#include <limits>

namespace scalescope {

/// Simulated time: integer nanoseconds since the start of the simulation.
/// Integer time makes event ordering exact and runs byte-for-byte reproducible.
using SimTime = std::int64_t;
inline constexpr SimTime kSimTimeMax = std::numeric_limits<SimTime>::max();
inline constexpr SimTime kNsPerSecond = 1'000'000'000;

/// A double-valued quantity tagged with its unit so that seconds and bytes cannot be mixed up.
template <class Tag>
struct Quantity {
  double value = 0.0;

  constexpr Quantity() = default;
  constexpr explicit Quantity(double v) : value(v) {}

  constexpr auto operator<=>(const Quantity&) const = default;
  constexpr Quantity operator+(Quantity o) const { return Quantity(value + o.value); }
  constexpr Quantity operator-(Quantity o) const { return Quantity(value - o.value); }
  constexpr Quantity operator*(double k) const { return Quantity(value * k); }
  constexpr Quantity operator/(double k) const { return Quantity(value / k); }
  constexpr double operator/(Quantity o) const { return value / o.value; }
  constexpr Quantity& operator+=(Quantity o) { value += o.value; return *this; }
  constexpr Quantity& operator-=(Quantity o) { value -= o.value; return *this; }
  friend constexpr Quantity operator*(double k, Quantity q) { return Quantity(k * q.value); }
};

struct BytesTag {};
struct SecondsTag {};
struct BytesPerSecondTag {};
struct FlopsTag {};
struct FlopsPerSecondTag {};

using Bytes = Quantity<BytesTag>;
using Seconds = Quantity<SecondsTag>;
using BytesPerSecond = Quantity<BytesPerSecondTag>;
using Flops = Quantity<FlopsTag>;
using FlopsPerSecond = Quantity<FlopsPerSecondTag>;

constexpr Seconds operator/(Bytes b, BytesPerSecond r) { return Seconds(b.value / r.value); }
constexpr BytesPerSecond operator/(Bytes b, Seconds s) { return BytesPerSecond(b.value / s.value); }
constexpr Bytes operator*(BytesPerSecond r, Seconds s) { return Bytes(r.value * s.value); }
constexpr Seconds operator/(Flops f, FlopsPerSecond r) { return Seconds(f.value / r.value); }

// Constructors in the units that appear in files (SI: 1 GB = 1e9 bytes; GiB = 2^30).
constexpr Bytes bytes(double b) { return Bytes(b); }
constexpr Bytes KiB(double k) { return Bytes(k * 1024.0); }
constexpr Bytes MiB(double m) { return Bytes(m * 1024.0 * 1024.0); }
constexpr Bytes GiB(double g) { return Bytes(g * 1024.0 * 1024.0 * 1024.0); }
constexpr Seconds seconds(double s) { return Seconds(s); }
constexpr Seconds milliseconds(double ms) { return Seconds(ms * 1e-3); }
constexpr Seconds microseconds(double us) { return Seconds(us * 1e-6); }
constexpr BytesPerSecond GBps(double g) { return BytesPerSecond(g * 1e9); }
constexpr BytesPerSecond Gbps(double g) { return BytesPerSecond(g * 1e9 / 8.0); }
constexpr FlopsPerSecond TFLOPS(double t) { return FlopsPerSecond(t * 1e12); }

constexpr double to_GBps(BytesPerSecond r) { return r.value / 1e9; }
constexpr double to_us(Seconds s) { return s.value * 1e6; }
constexpr double to_ms(Seconds s) { return s.value * 1e3; }

/// Seconds to the simulator clock, rounding up so that a positive duration never becomes 0.
inline SimTime to_sim_time(Seconds s) {
  if (s.value <= 0.0) return 0;
  const double ns = std::ceil(s.value * 1e9);
  return ns >= static_cast<double>(kSimTimeMax) ? kSimTimeMax : static_cast<SimTime>(ns);
}
constexpr Seconds from_sim_time(SimTime t) { return Seconds(static_cast<double>(t) * 1e-9); }

}  // namespace scalescope
