// Planner tab: the ranked-plan table model (QAbstractItemModelTester, sorting, filter), rows equal to
// what `scalescope plan` computes, the throughput sweep and its Amdahl fit, the background search
// with progress and Cancel, double-click -> simulate, and errors that keep the previous result.
#include <QAbstractItemModelTester>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QtTest>
#include <cmath>
#include <cstdio>

#include "scalescope/gui/error_reporter.hpp"
#include "scalescope/gui/main_window.hpp"
#include "scalescope/gui/plan_table_model.hpp"
#include "scalescope/gui/planner_tab.hpp"
#include "scalescope/gui/simulation_tab.hpp"
#include "scalescope/gui/workload_tab.hpp"
#include "scalescope/planner/search.hpp"
#include "scalescope/planner/setup.hpp"

using namespace scalescope;
using namespace scalescope::gui;

namespace {

/// llama3-8b on one 8-GPU HGX H200 node, gbs 8, datasheet inputs: small enough to search in a test.
PlannerRequest small_request() {
  PlannerRequest r;
  r.model = "llama3-8b";
  r.cluster = "hgx-h200-8";
  r.gbs = 8;
  r.top = 10;
  r.flow_top = 3;
  r.sweep = true;
  return r;
}

/// What `scalescope plan --model llama3-8b --cluster hgx-h200-8 --gbs 8 [--gpus G] --top T --flow-top F`
/// computes: the library calls of cli/cmd_plan.cpp written out here without the GUI's code.
std::optional<planner::SearchResult> cli_search(std::optional<int> gpus, int top, int flow_top) {
  auto model = models::load_model_by_name_or_path("llama3-8b");
  if (!model) return std::nullopt;
  ClusterOptions co;
  co.gpus = gpus;
  auto setup = planner::load_setup("hgx-h200-8", co, "");
  if (!setup) return std::nullopt;
  const planner::EvalSetup& s = **setup;
  planner::SearchSpace space;
  space.gpus = gpus.value_or(s.cluster.num_gpus());
  space.gbs = 8;
  planner::SearchOptions so;
  so.top = top;
  so.flow_top = std::min(flow_top, top);
  auto res = planner::search(*model, s.cluster, s.collectives, s.compute, space, so);
  if (!res) return std::nullopt;
  return std::move(res).value();
}

QString cli_fixed(double v, int decimals) {  // cli/planner_format.hpp's fixed()
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return QString(buf);
}

}  // namespace

class PlannerTest : public QObject {
  Q_OBJECT
 private slots:
  void plan_table_model_passes_model_tester_and_sorts() {
    auto res = cli_search(std::nullopt, 10, 0);
    QVERIFY(res.has_value());
    QVERIFY(res->ranked.size() >= 2);
    PlanTableModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.set_plans(res->ranked);
    QSortFilterProxyModel proxy;
    QAbstractItemModelTester proxy_tester(&proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);
    proxy.setSourceModel(&model);
    proxy.setSortRole(Qt::UserRole);
    // Sorting by tokens/s descending puts the largest tokens_per_s of the ranked list first.
    proxy.sort(PlanTableModel::kTokens, Qt::DescendingOrder);
    double best = 0;
    for (const auto& r : res->ranked) best = std::max(best, r.tokens_per_s);
    QCOMPARE(proxy.data(proxy.index(0, PlanTableModel::kTokens), Qt::UserRole).toDouble(), best);
    model.set_plans({});
    QCOMPARE(proxy.rowCount(), 0);
  }

  void planner_rows_equal_the_cli_library_output() {
    PlannerTab tab(nullptr);
    PlannerRequest rq = small_request();
    rq.sweep = false;
    tab.set_request(rq);
    QVERIFY(tab.run_blocking());
    auto cli = cli_search(std::nullopt, 10, 3);
    QVERIFY(cli.has_value());
    QCOMPARE(tab.model()->rowCount(), static_cast<int>(cli->ranked.size()));
    for (int i = 0; i < tab.model()->rowCount(); ++i) {
      const planner::RankedPlan& g = tab.model()->plan_at(i);
      const planner::RankedPlan& c = cli->ranked[static_cast<std::size_t>(i)];
      QCOMPARE(models::to_string(g.plan), models::to_string(c.plan));
      QCOMPARE(g.step_time_s, c.step_time_s);  // same calls, deterministic
      QCOMPARE(g.tokens_per_s, c.tokens_per_s);
      // The cells read as `scalescope plan`'s text table: step s with 4 decimals, tokens/s with 0.
      QCOMPARE(tab.model()->data(tab.model()->index(i, PlanTableModel::kStep)).toString(), cli_fixed(c.step_time_s, 4));
      QCOMPARE(tab.model()->data(tab.model()->index(i, PlanTableModel::kTokens)).toString(), cli_fixed(c.tokens_per_s, 0));
      QCOMPARE(tab.model()->data(tab.model()->index(i, PlanTableModel::kFlowStep)).toString(),
               c.flow_step_time_s ? cli_fixed(*c.flow_step_time_s, 4) : QString("-"));
    }
    // The status line carries the library's prune counts, the bound-skipped ones included.
    const planner::PruneCounts& n = cli->counts;
    const QString counts = QString("%1 plans enumerated, %2 excluded by the fixed keys, %3 invalid, %4 out of memory, "
                                   "%5 dominated, %6 skipped (lower bound above the top), %7 failed, %8 simulated")
                               .arg(n.plans).arg(n.fixed_out).arg(n.invalid).arg(n.out_of_memory).arg(n.dominated)
                               .arg(n.bounded).arg(n.failed).arg(n.evaluated);
    QVERIFY2(tab.status_text().contains(counts), qPrintable(tab.status_text() + "\nexpected: " + counts));
  }

  void sweep_points_equal_cli_and_amdahl_fit_is_closed_form() {
    // Sweep GPU counts for 8 GPUs per node and 1 node: 1, 2, 4 within the node, then 8.
    QCOMPARE(sweep_gpu_counts(8, 1), (std::vector<int>{1, 2, 4, 8}));
    // 4 GPUs per node, 6 nodes: 1, 2 within a node, then nodes 1, 2, 3, 4, 6 -> 4, 8, 12, 16, 24.
    QCOMPARE(sweep_gpu_counts(4, 6), (std::vector<int>{1, 2, 4, 8, 12, 16, 24}));
    auto out = run_planner(small_request(), nullptr);
    QVERIFY2(out.has_value(), out ? "" : out.error().str().c_str());
    QCOMPARE(out->sweep.size(), std::size_t{4});
    // Each point is rank 1 of `scalescope plan --gpus G --top 1 --flow-top 0`.
    for (const SweepPoint& p : out->sweep) {
      auto cli = cli_search(p.gpus, 1, 0);
      QVERIFY(cli.has_value());
      QCOMPARE(p.best.has_value(), !cli->ranked.empty());
      if (p.best) QCOMPARE(p.best->tokens_per_s, cli->ranked.front().tokens_per_s);
    }
    // Amdahl on x = n / n0, S = tput(n) / tput(n0): s = sum((1 - 1/x)(1/S - 1/x)) / sum((1 - 1/x)^2).
    double sxy = 0, sxx = 0, base = 0, n0 = 0;
    for (const SweepPoint& p : out->sweep) {
      if (!p.best) continue;
      if (base == 0) {
        base = p.best->tokens_per_s;
        n0 = p.gpus;
      }
      const double x = p.gpus / n0, S = p.best->tokens_per_s / base;
      sxy += (1 - 1 / x) * (1 / S - 1 / x);
      sxx += (1 - 1 / x) * (1 - 1 / x);
    }
    QVERIFY(sxx > 0);
    QVERIFY(out->amdahl.has_value());
    QVERIFY(std::fabs(out->amdahl->serial_fraction - sxy / sxx) < 1e-12);
  }

  void background_search_reports_progress_and_fills_the_table() {
    PlannerTab tab(nullptr);
    tab.set_request(small_request());
    QSignalSpy done(&tab, &PlannerTab::finished);
    QVERIFY(tab.start());
    QVERIFY(tab.running());
    QVERIFY(!tab.start());  // one search at a time
    QVERIFY(done.wait(120000));
    QVERIFY(!tab.running());
    QVERIFY(tab.has_outcome());
    QVERIFY(tab.model()->rowCount() > 0);
    QCOMPARE(tab.progress_bar()->format(), QString("done"));
    QVERIFY(!tab.cancel_button()->isEnabled());
    QCOMPARE(tab.outcome().sweep.size(), std::size_t{4});
  }

  void cancel_stops_the_search_and_keeps_the_previous_table() {
    PlannerTab tab(nullptr);
    PlannerRequest rq = small_request();
    rq.sweep = false;
    tab.set_request(rq);
    QVERIFY(tab.run_blocking());
    const int rows = tab.model()->rowCount();
    QVERIFY(rows > 0);
    // A large search (gpt3-175b on 64 nodes of h100-rail-ndr, gbs 1536: thousands of plans and a
    // 512-GPU cluster to build), cancelled right after it starts; the worker checks the flag
    // before the search and search() before each plan and after its workers stop.
    rq.model = "gpt3-175b";
    rq.cluster = "h100-rail-ndr";
    rq.nodes = 64;
    rq.gbs = 1536;
    tab.set_request(rq);
    QSignalSpy done(&tab, &PlannerTab::finished);
    QVERIFY(tab.start());
    tab.cancel();
    QVERIFY(done.wait(120000));
    QVERIFY(!tab.running());
    QVERIFY2(tab.status_text().contains("cancelled"), qPrintable(tab.status_text()));
    QCOMPARE(tab.model()->rowCount(), rows);
    QCOMPARE(tab.outcome().request.model, std::string("llama3-8b"));
  }

  void search_with_unset_cancel_flag_gives_the_same_ranking() {
    // The cancel parameter must not change results: flag false == no flag.
    auto model = models::load_model_by_name_or_path("llama3-8b");
    auto setup = planner::load_setup("hgx-h200-8", {}, "");
    QVERIFY(model && setup);
    planner::SearchSpace space;
    space.gpus = 8;
    space.gbs = 8;
    planner::SearchOptions a;
    a.flow_top = 0;
    std::atomic<bool> flag{false};
    planner::SearchOptions b = a;
    b.cancel = &flag;
    const auto& s = **setup;
    auto ra = planner::search(*model, s.cluster, s.collectives, s.compute, space, a);
    auto rb = planner::search(*model, s.cluster, s.collectives, s.compute, space, b);
    QVERIFY(ra && rb);
    QCOMPARE(ra->ranked.size(), rb->ranked.size());
    for (std::size_t i = 0; i < ra->ranked.size(); ++i) QCOMPARE(ra->ranked[i].step_time_s, rb->ranked[i].step_time_s);
    flag = true;
    auto rc = planner::search(*model, s.cluster, s.collectives, s.compute, space, b);
    QVERIFY(!rc);
    QVERIFY(QString::fromStdString(rc.error().str()).contains("cancelled"));
  }

  void filter_box_keeps_matching_rows_only() {
    PlannerTab tab(nullptr);
    PlannerRequest rq = small_request();
    rq.sweep = false;
    rq.top = 50;
    tab.set_request(rq);
    QVERIFY(tab.run_blocking());
    int gpipe = 0;
    for (const auto& r : tab.model()->plans()) gpipe += r.plan.schedule == models::Schedule::gpipe ? 1 : 0;
    tab.filter_box()->setText("gpipe");
    // Rows whose text contains "gpipe": exactly the gpipe-schedule plans (no other column holds it).
    QCOMPARE(tab.proxy()->rowCount(), gpipe);
    tab.filter_box()->clear();
    QCOMPARE(tab.proxy()->rowCount(), tab.model()->rowCount());
  }

  void double_click_simulates_the_plan_with_the_same_step_time() {
    MainWindow w(false);
    w.resize(1400, 900);
    w.planner()->set_request([] {
      PlannerRequest r = small_request();
      r.sweep = false;
      return r;
    }());
    QVERIFY(w.planner()->run_blocking());
    QTableView* table = w.planner()->table();
    table->sortByColumn(PlanTableModel::kRank, Qt::AscendingOrder);
    const planner::RankedPlan& first = w.planner()->model()->plan_at(0);
    w.select_tab("planner");
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    emit table->doubleClicked(w.planner()->proxy()->index(0, PlanTableModel::kStep));  // as a double-click does
    // The simulation tab runs `scalescope simulate` for the same model, cluster and plan: the
    // analytical step time of the planner row (same models::predict options).
    QCOMPARE(w.current_tab_name(), QString("simulation"));
    QCOMPARE(w.simulation()->shown_step_time_s(), first.step_time_s);
    QCOMPARE(models::to_string(w.workload()->session().plan), models::to_string(first.plan));
  }

  void bad_input_is_reported_and_the_table_kept() {
    ErrorReporter errors;
    PlannerTab tab(&errors);
    PlannerRequest rq = small_request();
    rq.sweep = false;
    tab.set_request(rq);
    QVERIFY(tab.run_blocking());
    const int rows = tab.model()->rowCount();
    rq.fix = "tp=banana";
    tab.set_request(rq);
    QVERIFY(!tab.run_blocking());
    QCOMPARE(errors.messages().size(), qsizetype{1});
    QVERIFY2(errors.last().contains("tp"), qPrintable(errors.last()));
    QCOMPARE(tab.model()->rowCount(), rows);
    rq.fix.clear();
    rq.model = "no-such-model";
    tab.set_request(rq);
    QVERIFY(!tab.run_blocking());
    QVERIFY2(errors.last().contains("no-such-model"), qPrintable(errors.last()));
    QCOMPARE(tab.model()->rowCount(), rows);
  }
};

QTEST_MAIN(PlannerTest)
#include "planner_test.moc"
