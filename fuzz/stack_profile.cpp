// Fuzz target: stack profiles (scalescope.stack/1, models/stacks/*.json) -> stack_from_json, then priced by the cost
// model (layer, edges, optimizer, memory) for a small model and plan; bytes that do not start with '{' are one
// expression of the stack language (expr.hpp), parsed and evaluated over the stack's symbols.
#include <cmath>
#include <memory>

#include "fuzz_common.hpp"
#include "scalescope/models/compute_model.hpp"
#include "scalescope/models/expr.hpp"
#include "scalescope/models/layer_costs.hpp"
#include "scalescope/models/memory.hpp"
#include "scalescope/models/stack_profile.hpp"

namespace {

using namespace scalescope;

models::ModelSpec small_model() {
  models::ModelSpec m;
  m.name = "fuzz";
  m.layers = 4;
  m.hidden = 1024;
  m.heads = 8;
  m.kv_heads = 4;
  m.ffn_hidden = 4096;
  m.vocab = 32000;
  m.seq_len = 1024;
  return m;
}

/// The H100 SXM datasheet (989.4 TFLOP/s bf16 dense, 3.35 TB/s): the compute model the rows are priced with.
const models::ComputeModel& h100() {
  static const models::ComputeModel m = [] {
    GpuSpec g;
    g.model = "H100 fuzz";
    g.hbm_bandwidth = GBps(3350);
    g.peak.bf16 = TFLOPS(989.4);
    return models::ComputeModel::datasheet(g).value();
  }();
  return m;
}

void expression(std::string_view text) {
  static const models::SymbolTable table = [] {
    models::SymbolTable t;
    for (const auto& n : models::stack_base_symbols()) t.add(n);
    for (const auto& n : models::stack_memory_extra_symbols()) t.add(n);
    return t;
  }();
  auto e = models::Expr::parse(text, table, "fuzz-expr", "$.phases.layer_forward[0].bytes");
  if (!e) {
    fuzz::check_error(e.error());
    return;
  }
  std::vector<double> values(table.size());
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>(i % 7) + 0.5;
  (void)e->eval(values);
  (void)e->uses(0);
}

void price(const models::StackProfile& s) {
  const models::ModelSpec m = small_model();
  models::Plan plan;
  plan.tp = 2;
  plan.mbs = 2;
  plan.gbs = 2;
  if (!s.applies_to(m, plan)) return;
  auto shared = std::make_shared<const models::StackProfile>(s);
  models::ComputeModel cm = h100();
  cm.set_stack(shared);
  (void)models::layer_cost(m, plan, cm);
  (void)models::edge_cost(m, plan, cm);
  (void)models::optimizer_cost(1e8, m, plan, cm);
  models::MemoryOptions mo;
  mo.stack = shared;
  (void)models::memory_per_rank(m, plan, 0, mo).total();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = fuzz::text_of(data, size);
  if (text.empty() || text.front() != '{') {
    expression(text);
    return 0;
  }
  return fuzz::on_json(data, size, [&](const Json& j) {
    fuzz::check(models::stack_from_json(j, "fuzz-stack.json"), [](const models::StackProfile& s) { price(s); });
  });
}
