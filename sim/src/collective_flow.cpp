// Flow fidelity: runs the chosen algorithm's unit flows on a FlowNetwork in phases (ring steps
// grouped into at most max_phases phases; tree, broadcast, alltoall, sendrecv in one), so that
// concurrent collectives share links by max-min fairness.
#include <algorithm>
#include <cassert>
#include <memory>

#include "collective_impl.hpp"

namespace scalescope {

namespace {

/// State of one running collective; owned by the callbacks of its pending flows and events.
struct FlowRun : std::enable_shared_from_this<FlowRun> {
  Engine* engine = nullptr;
  FlowNetwork* network = nullptr;
  std::shared_ptr<coll::Group> group;  // keeps the pattern alive
  const coll::Pattern* pattern = nullptr;
  std::uint32_t flows = 0;              // unit flows per phase
  // Unit flows with identical routes run as one aggregate flow (FlowNetwork::start's count): the
  // first route of each set of equal routes and the size of the set.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> distinct;
  std::vector<double> phase_bytes;      // per unit flow
  std::vector<double> phase_latency_s;  // per unit flow
  double cap = coll::kInf;
  SimTime started = 0;
  std::function<void(Seconds)> done;
  std::size_t phase = 0;
  std::uint32_t outstanding = 0;

  void group_routes() {
    std::vector<std::uint32_t> order(flows);
    for (std::uint32_t r = 0; r < flows; ++r) order[r] = r;
    auto less = [&](std::uint32_t a, std::uint32_t b) {
      const auto ra = pattern->route(a), rb = pattern->route(b);
      if (std::lexicographical_compare(ra.begin(), ra.end(), rb.begin(), rb.end())) return true;
      if (std::lexicographical_compare(rb.begin(), rb.end(), ra.begin(), ra.end())) return false;
      return a < b;
    };
    std::sort(order.begin(), order.end(), less);
    for (std::size_t i = 0; i < order.size();) {
      std::size_t j = i + 1;
      const auto ri = pattern->route(order[i]);
      while (j < order.size() && std::ranges::equal(ri, pattern->route(order[j]))) ++j;
      distinct.emplace_back(order[i], static_cast<std::uint32_t>(j - i));
      i = j;
    }
    std::sort(distinct.begin(), distinct.end());  // in route order, as the unit flows were started
  }
  void launch() {
    outstanding = static_cast<std::uint32_t>(distinct.size());
    auto self = shared_from_this();
    for (const auto& [r, count] : distinct) {
      network->start(pattern->route(r), Bytes(phase_bytes[phase]), [self](FlowId) { self->flow_done(); },
                     Seconds(phase_latency_s[phase]), BytesPerSecond(cap), count);
    }
  }
  void flow_done() {
    if (--outstanding > 0) return;
    if (++phase < phase_bytes.size()) {
      launch();
      return;
    }
    auto fn = std::move(done);
    fn(from_sim_time(engine->now() - started));
  }
};

}  // namespace

void CollectiveModel::start(Engine& engine, FlowNetwork& network, CollOp op, std::span<const int> ranks, Bytes size,
                            std::function<void(Seconds)> done, const FlowRunOptions& options) const {
  assert(!check(op, ranks, options.algorithm, options.protocol) && "CollectiveModel::start: invalid request");
  assert(options.max_phases >= 1 && "CollectiveModel::start: max_phases must be at least 1");
  auto g = impl_->group(ranks);
  if (g->n < 2) {
    engine.schedule_after(0, [fn = std::move(done)]() mutable { fn(Seconds(0.0)); });
    return;
  }
  const coll::Choice ch = impl_->choose(op, *g, size.value, options.algorithm, options.protocol);

  auto run = std::make_shared<FlowRun>();
  run->engine = &engine;
  run->network = &network;
  run->group = g;
  run->pattern = ch.pattern;
  run->flows = ch.pattern->routes_in(ch.channels);
  run->group_routes();
  run->cap = ch.unit_cap;
  run->started = engine.now();
  run->done = std::move(done);
  // Ring steps are identical in routes and size; consecutive steps are grouped into phases.
  const int phases = std::min(ch.steps, options.max_phases);
  for (int k = 0; k < phases; ++k) {
    const int steps = ch.steps / phases + (k < ch.steps % phases ? 1 : 0);
    const double frac = static_cast<double>(steps) / ch.steps;
    run->phase_bytes.push_back(ch.unit_wire_bytes * frac);
    run->phase_latency_s.push_back(ch.hops_s * frac);
  }
  engine.schedule_after(to_sim_time(Seconds(ch.base_s)), [run] { run->launch(); });
}

CollResult CollectiveModel::simulate_flow(CollOp op, std::span<const int> ranks, Bytes size,
                                          const FlowRunOptions& options) const {
  Engine engine;
  FlowNetwork network(engine, effective_capacities());
  Seconds elapsed(0.0);
  bool finished = false;
  start(engine, network, op, ranks, size, [&](Seconds t) { elapsed = t; finished = true; }, options);
  engine.run();
  assert(finished && "simulate_flow: the collective did not finish (a zero-capacity link?)");
  (void)finished;
  auto g = impl_->group(ranks);
  if (g->n < 2) return analytical(op, ranks, size);
  const coll::Choice ch = impl_->choose(op, *g, size.value, options.algorithm, options.protocol);
  return impl_->result(op, *g, ch, size.value, elapsed.value);
}

}  // namespace scalescope
