// Running a sweep on one process or the ranks of an MPI job, journalled and resumable.
#include <optional>

#include "scalescope/planner/sweep.hpp"
#include "scalescope/planner/sweep_output.hpp"

namespace scalescope::planner {

Expected<SweepResult> run_sweep(const SweepSpec& spec, const SweepRunOptions& options, const StackLoader& load_stack,
                                Transport* transport) {
  const bool distributed = transport != nullptr && transport->size() > 1;
  const bool root = !distributed || transport->rank() == 0;
  SweepResult res;
  res.points = spec.points.size();
  // Every rank loads the inputs (they are the same files); an error stops every rank the same way.
  auto stacks = check_sweep_inputs(spec, load_stack);
  if (!stacks) return stacks.error();
  auto cancelled = [&] { return options.cancel != nullptr && options.cancel->load(); };
  const WorkFn work = [&](std::size_t point) -> std::string {
    if (cancelled()) return "[]";
    return Json(evaluate_point(spec, point, *stacks)).dump();
  };
  if (!root) {
    serve(work, *transport);
    res.worker = true;
    return res;
  }
  WorkSplitter split(distributed ? transport : nullptr, options.threads);
  std::optional<SweepFormat> format;
  std::optional<SweepJournal> journal;
  std::map<std::size_t, std::vector<Json>> rows;
  if (!options.output.empty()) {
    auto f = sweep_format_for(options.output);
    auto j = f ? SweepJournal::open(options.output, spec, options.restart) : Expected<SweepJournal>(f.error());
    if (!j) {
      split.finish();  // let the other ranks leave
      return j.error();
    }
    format = *f;
    journal.emplace(std::move(j).value());
    rows = journal->done();
  }
  res.resumed = rows.size();
  std::vector<std::size_t> todo;
  for (std::size_t i = 0; i < spec.points.size(); ++i)
    if (!rows.count(i)) todo.push_back(i);
  std::optional<Error> failure;
  std::size_t done = rows.size();
  split.run(todo, work, [&](std::size_t point, std::string bytes) {
    if (failure || cancelled()) return;
    std::vector<Json> r = Json::parse(bytes).get<std::vector<Json>>();
    if (journal) {
      if (auto ok = journal->append(point, r); !ok) failure = ok.error();
    }
    rows[point] = std::move(r);
    ++res.computed;
    if (options.progress) options.progress(++done, spec.points.size());
  });
  split.finish();
  if (failure) return *failure;
  if (cancelled()) return runtime_error("sweep cancelled after " + std::to_string(done) + " of " +
                                        std::to_string(spec.points.size()) + " points (run again to resume)");
  if (journal) {
    if (auto ok = journal->finish(spec, *format); !ok) return ok.error();
  }
  for (auto& [point, rs] : rows)
    for (auto& r : rs) res.rows.push_back(std::move(r));
  return res;
}

}  // namespace scalescope::planner
