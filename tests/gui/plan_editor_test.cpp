// Workload tab: the plan editor shows validate()'s message for invalid plans and none for valid ones.
#include <QSpinBox>
#include <QtTest>

#include "scalescope/gui/error_reporter.hpp"
#include "scalescope/gui/workload_tab.hpp"

using namespace scalescope;
using namespace scalescope::gui;

class PlanEditorTest : public QObject {
  Q_OBJECT
 private slots:
  void valid_plan_has_no_error() {
    ErrorReporter errors;
    WorkloadTab tab(&errors);
    Session s;
    s.model = "llama3-8b";
    s.cluster = "hgx-h200-8";
    s.plan = Session::default_plan();  // tp=8 divides heads=32, kv_heads=8, ffn 14336; gbs 8 % (1*1) == 0
    tab.set_session(s);
    QVERIFY2(tab.plan_error().isEmpty(), qPrintable(tab.plan_error()));
    QVERIFY(tab.status_text().startsWith("Plan valid: 8 GPUs"));
  }

  void tp_not_dividing_heads_shows_validate_message() {
    ErrorReporter errors;
    WorkloadTab tab(&errors);
    Session s;
    s.model = "llama3-8b";  // catalog: heads = 32
    tab.set_session(s);
    tab.tp_box()->setValue(3);  // 32 % 3 = 2: plan.hpp documents "plan: tp: tp=3 does not divide heads=32"
    QCOMPARE(tab.plan_error(), QString("plan: tp: tp=3 does not divide heads=32"));
    QVERIFY(tab.status_text().contains("Invalid"));
    tab.tp_box()->setValue(4);  // 32 % 4 == 0, 8 % 4 == 0, 14336 % 4 == 0: valid again
    QVERIFY(tab.plan_error().isEmpty());
  }

  void gbs_not_divisible_is_reported() {
    ErrorReporter errors;
    WorkloadTab tab(&errors);
    Session s;
    s.model = "llama3-8b";
    s.plan = Session::default_plan();
    s.plan.mbs = 3;  // gbs 8 % (mbs 3 * dp 1) = 2 != 0
    tab.set_session(s);
    QVERIFY2(tab.plan_error().contains("gbs=8 is not divisible by mbs*dp=3"), qPrintable(tab.plan_error()));
  }

  void session_round_trips_through_the_editor() {
    ErrorReporter errors;
    WorkloadTab tab(&errors);
    Session s;
    s.model = "llama2-7b";
    s.cluster = "dgx-a100-8";
    s.nodes = 2;
    s.calibration = "h200x4";
    s.plan.tp = 2;
    s.plan.pp = 2;
    s.plan.dp = 4;
    s.plan.zero = 1;
    s.plan.mbs = 2;
    s.plan.gbs = 64;
    s.plan.recompute = models::Recompute::selective;
    s.plan.sp = true;
    tab.set_session(s);
    const Session back = tab.session();
    QVERIFY(back.plan == s.plan);
    QCOMPARE(back.model, s.model);
    QCOMPARE(back.cluster, s.cluster);
    QCOMPARE(back.nodes, 2);
    QCOMPARE(back.calibration, s.calibration);
  }

  void importing_a_bad_model_file_reports_and_keeps_the_model() {
    ErrorReporter errors;
    WorkloadTab tab(&errors);
    Session s;
    s.model = "llama3-8b";
    tab.set_session(s);
    QVERIFY(!tab.import_model_file("/nonexistent/config.json"));
    QCOMPARE(errors.messages().size(), 1);
    QVERIFY(errors.last().contains("/nonexistent/config.json"));
    QCOMPARE(tab.session().model, std::string("llama3-8b"));
  }
};

QTEST_MAIN(PlanEditorTest)
#include "plan_editor_test.moc"
