// Item models and views: the measured-run table passes QAbstractItemModelTester and shows the files'
// numbers; CSV export; cluster view structure; timeline zoom.
#include <QAbstractItemModelTester>
#include <QSortFilterProxyModel>
#include <QtTest>
#include <algorithm>
#include <fstream>
#include <map>

#include "scalescope/gui/cluster_view.hpp"
#include "scalescope/gui/scaling_tab.hpp"
#include "scalescope/gui/timeline_widget.hpp"

using namespace scalescope;
using namespace scalescope::gui;

namespace {
const std::filesystem::path kMeasured = std::filesystem::path(SCALESCOPE_SOURCE_DIR) / "validation/h200x4/measured";
}

class ModelsTest : public QObject {
  Q_OBJECT
 private slots:
  void measured_model_passes_model_tester() {
    MeasuredModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    std::vector<Error> errors;
    auto points = load_measured_dir(kMeasured, &errors);
    QVERIFY(errors.empty());
    QVERIFY(!points.empty());
    model.set_points(std::move(points));
    QSortFilterProxyModel proxy;
    QAbstractItemModelTester proxy_tester(&proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);
    proxy.setSourceModel(&model);
    proxy.setSortRole(Qt::UserRole);
    proxy.sort(MeasuredModel::kMeasured);
    QCOMPARE(proxy.rowCount(), model.rowCount());
  }

  void measured_row_shows_the_file_values() {
    // validation/h200x4/measured/tp-dp-llama-1b-strong-n4-tp2-pp1-dp2-z0-mbs1-gbs16.json:
    // "gpus": 4, "family": "tp-dp", "measured": {"step_time_s": 0.8324374999999999} -> "0.8324".
    auto p = load_measured_point(kMeasured / "tp-dp-llama-1b-strong-n4-tp2-pp1-dp2-z0-mbs1-gbs16.json");
    QVERIFY(p.has_value());
    QCOMPARE(p->gpus, 4);
    QCOMPARE(p->family, std::string("tp-dp"));
    QCOMPARE(p->plan.tp, 2);
    QCOMPARE(p->plan.dp, 2);
    MeasuredModel model;
    model.set_points({*p});
    QCOMPARE(model.data(model.index(0, MeasuredModel::kMeasured)).toString(), QString("0.8324"));
    QCOMPARE(model.data(model.index(0, MeasuredModel::kPredicted)).toString(), QString("n/a"));
  }

  void csv_has_header_and_one_line_per_row() {
    MeasuredModel model;
    model.set_points(load_measured_dir(kMeasured, nullptr));
    const QString csv = model.to_csv();
    QCOMPARE(csv.count('\n'), model.rowCount() + 1);
    QVERIFY(csv.startsWith("file,family,scaling,model,GPUs,plan,measured s,predicted s,error\n"));
  }

  void malformed_measured_file_names_file_and_path() {
    const auto f = std::filesystem::temp_directory_path() / "scalescope_gui_bad_measured.json";
    std::ofstream(f) << R"({"schema": "scalescope.measured/1", "model": {"name": "x"}, "plan": "tp=1,gbs=1"})";
    auto p = load_measured_point(f);
    QVERIFY(!p.has_value());
    QVERIFY(p.error().file.find("scalescope_gui_bad_measured.json") != std::string::npos);
    std::filesystem::remove(f);
  }

  void cluster_view_draws_every_device_and_link_of_a_small_node() {
    auto c = load_cluster_by_name_or_path("hgx-h200-4");
    QVERIFY(c.has_value());
    ClusterView view;
    view.resize(800, 600);
    view.set_cluster(*c);
    // topologies/hgx-h200-4.json: 1 node box + 4 GPUs + 1 NVSwitch + 2 PCIe switches + 2 CPUs = 10 items;
    // links: 4 GPU-NVSwitch + 4 GPU-PCIe + 2 PCIe-CPU + 1 CPU-CPU = 11 physical links, one wire each.
    QCOMPARE(view.items().size(), std::size_t{10});
    QCOMPARE(view.wires().size(), std::size_t{11});
    QVERIFY(!view.collapsed());
  }

  void large_cluster_is_collapsed_by_node() {
    ClusterOptions copt;
    copt.nodes = 8;
    auto c = load_cluster_by_name_or_path("h100-rail-ndr", copt);
    QVERIFY2(c.has_value(), c ? "" : c.error().str().c_str());
    ClusterView view;
    view.set_cluster(*c);
    QVERIFY(view.collapsed());  // 8 nodes > 4
    // Collapsed: no wire stays inside one node; every wire ends at a fabric switch or a node box.
    int node_boxes = 0;
    for (const auto& it : view.items()) node_boxes += it.node ? 1 : 0;
    QCOMPARE(node_boxes, 8);
  }

  void cluster_of_16384_gpus_draws_64_node_boxes_and_at_most_64_per_tier() {
    ClusterOptions copt;
    copt.gpus = 16384;
    auto c = load_cluster_by_name_or_path("h100-ndr-multiplane", copt);
    QVERIFY2(c.has_value(), c ? "" : c.error().str().c_str());
    QCOMPARE(c->num_nodes(), 2048);
    ClusterView view;
    view.resize(1200, 800);
    view.set_cluster(*c);
    QVERIFY(view.collapsed());
    QCOMPARE(view.node_group(), 32);  // ceil(2048 / 64) nodes per box
    int node_boxes = 0;
    std::map<double, int> per_tier_row;  // switch boxes by their vertical position (one row per tier)
    for (const auto& it : view.items()) {
      if (it.node) {
        ++node_boxes;
      } else {
        ++per_tier_row[it.box.center().y()];
      }
    }
    QCOMPARE(node_boxes, 64);
    QVERIFY(!per_tier_row.empty());
    for (const auto& [y, n] : per_tier_row) QVERIFY2(n <= 64, qPrintable(QString("%1 boxes in one tier").arg(n)));
    // The first box holds nodes 0-31, 8 GPUs each: ranks 0-255.
    const auto first = std::find_if(view.items().begin(), view.items().end(), [](const auto& it) { return it.node; });
    QVERIFY(first->tip.contains("nodes 0-31"));
    QVERIFY(first->tip.contains("ranks 0-255"));
    // Wires join boxes only, so there are at most as many as box pairs per link kind, not one per link.
    QVERIFY(view.wires().size() < 64 * 64 * 2);
  }

  void rank_lists_parse_as_typed_and_bad_ones_say_why() {
    QString err;
    auto r = parse_rank_list(" 8, 0-3,2 ", &err);
    QVERIFY(r.has_value());
    QCOMPARE(*r, (std::vector<int>{0, 1, 2, 3, 8}));
    QVERIFY(!parse_rank_list("5-3", &err));
    QVERIFY(err.contains("ends before it starts"));
    QVERIFY(!parse_rank_list("rank 4", &err));
    QVERIFY(err.contains("'rank 4'"));
    QVERIFY(!parse_rank_list("0-2000", &err));  // 2,001 ranks > 1,024
    QVERIFY(err.contains("more than 1024"));
    QVERIFY(!parse_rank_list(" , ", &err));
    QVERIFY(!parse_rank_list("-1", &err));
  }

  void timeline_draws_the_first_16_ranks_unless_ranks_are_named() {
    // 20 ranks, one 1 ms task each on stream 0: by default ranks 0-15 (16 rows); named {3, 19, 25}: the two
    // that ran (25 did not), 2 rows.
    TaskGraph g;
    SimResult r;
    r.step_ns = 1'000'000;
    for (int rank = 0; rank < 20; ++rank) {
      g.add_compute(rank, 0, TaskCategory::forward, "fwd", Seconds(1e-3));
      r.task_times.push_back(TaskTiming{0, 0, 1'000'000});
    }
    TimelineWidget t;
    t.set_run(g, r);
    QCOMPARE(t.ranks_in_run(), 20);
    QCOMPARE(t.rows(), TimelineWidget::kDefaultRanks);
    QCOMPARE(t.shown_ranks().front(), 0);
    QCOMPARE(t.shown_ranks().back(), 15);
    QCOMPARE(t.bars().size(), std::size_t{16});
    t.set_run(g, r, {3, 19, 25});
    QCOMPARE(t.shown_ranks(), (std::vector<int>{3, 19}));
    QCOMPARE(t.rows(), 2);
    QCOMPARE(t.bars().size(), std::size_t{2});
  }

  void timeline_zoom_halves_the_visible_span_and_tooltips_name_the_task() {
    // One 1 ms forward task on rank 0 stream 0 that ran over [0, 1 ms): one row, one bar, and the
    // initial view spans the step (1e6 ns).
    TaskGraph g;
    g.add_compute(0, 0, TaskCategory::forward, "fwd mb0", Seconds(1e-3));
    SimResult r;
    r.step_ns = 1'000'000;
    r.task_times = {TaskTiming{0, 0, 1'000'000}};
    TimelineWidget t;
    t.resize(1124, 300);
    t.set_run(g, r);
    QCOMPARE(t.rows(), 1);
    QCOMPARE(t.bars().size(), std::size_t{1});
    QCOMPARE(t.view_span(), 1e6);
    t.zoom(2.0, 120);  // anchored at the left edge of the plot (label column is 120 px): start stays 0
    QCOMPARE(t.view_span(), 5e5);
    QCOMPARE(t.view_start(), 0.0);
    QVERIFY(t.tooltip_at(QPointF(400, 40)).contains("fwd mb0"));
  }
};

QTEST_MAIN(ModelsTest)
#include "models_test.moc"
