// Workload tab: the plan editor shows validate()'s message for invalid plans and none for valid ones.
#include <QComboBox>
#include <QLineEdit>
#include <QCheckBox>
#include <QSpinBox>
#include <QtTest>

#include "scalescope/gui/dense_stack_box.hpp"
#include "scalescope/gui/error_reporter.hpp"
#include "scalescope/gui/fine_tuning_box.hpp"
#include "scalescope/gui/moe_box.hpp"
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

  void dense_stack_keys_round_trip_through_the_editor() {
    ErrorReporter errors;
    WorkloadTab tab(&errors);
    Session s;
    s.model = "llama3-70b";
    s.cluster = "h100-rail-ndr";
    s.plan = Session::default_plan();
    s.plan.tp = 4;
    s.plan.pp = 8;
    s.plan.cp = 2;
    s.plan.dp = 2;
    s.plan.zero = 1;
    s.plan.gbs = 128;
    s.plan.sp = true;
    s.plan.precision = models::Precision::fp8;
    s.plan.fp8_recipe = models::Fp8Recipe::tensorwise;
    s.plan.grad_reduce_in_fp32 = false;
    s.plan.overlap_param_gather = true;
    s.plan.tp_comm_overlap = true;
    s.plan.cp_comm = models::CpComm::a2a;
    s.plan.cross_entropy_fusion = models::CrossEntropyFusion::te;
    s.plan.optimizer_impl = models::OptimizerImpl::foreach;
    tab.set_session(s);
    QCOMPARE(tab.dense_box()->cross_entropy_box()->currentText(), QString("te"));
    QCOMPARE(tab.dense_box()->optimizer_box()->currentText(), QString("foreach"));
    QVERIFY(tab.session().plan == s.plan);
    QVERIFY2(tab.plan_error().isEmpty(), qPrintable(tab.plan_error()));
    QVERIFY(tab.status_text().contains("x cp 2"));
    // An invalid dense key shows validate()'s message.
    tab.dense_box()->cp_box()->setValue(3);  // 2 x 3 = 6 does not divide 8192
    QCOMPARE(tab.plan_error(), QString("plan: cp: cp=3 needs 2*cp to divide seq_len=8192 (load-balanced causal split)"));
  }

  void moe_keys_round_trip_and_need_an_moe_model() {
    ErrorReporter errors;
    WorkloadTab tab(&errors);
    Session s;
    s.model = "mixtral-8x7b";
    s.cluster = "h100-rail-ndr";
    s.plan = Session::default_plan();
    s.plan.tp = 1;
    s.plan.dp = 8;
    s.plan.ep = 8;
    s.plan.zero = 1;
    s.plan.gbs = 64;
    s.plan.moe_imbalance = 1.25;
    s.plan.moe_a2a_overlap = true;
    tab.set_session(s);
    QVERIFY(tab.moe_box()->isEnabled());
    QVERIFY(tab.session().plan == s.plan);
    QVERIFY2(tab.plan_error().isEmpty(), qPrintable(tab.plan_error()));
    QVERIFY(tab.status_text().contains("experts over ep 8"));
    // ep=3 does not divide the 8 experts: validate()'s message.
    tab.moe_box()->ep_box()->setValue(3);
    QCOMPARE(tab.plan_error(), QString("plan: ep: ep=3 does not divide experts=8"));
    // A dense model disables the group and keeps the MoE keys at their defaults.
    s.model = "llama3-8b";
    s.plan = Session::default_plan();
    tab.set_session(s);
    QVERIFY(!tab.moe_box()->isEnabled());
    QCOMPARE(tab.session().plan.ep, 1);
  }

  void fine_tuning_keys_round_trip() {
    ErrorReporter errors;
    WorkloadTab tab(&errors);
    Session s;
    s.model = "llama3-8b";
    s.cluster = "h100-rail-ndr";
    s.plan = Session::default_plan();
    s.plan.lora_rank = 16;
    s.plan.lora_modules = models::kLoraQkv | models::kLoraFc2;
    s.plan.packed_doc_tokens = 180;
    tab.set_session(s);
    QCOMPARE(tab.fine_tuning_box()->rank_box()->value(), 16);
    QVERIFY(tab.fine_tuning_box()->module_box(models::kLoraQkv)->isChecked());
    QVERIFY(!tab.fine_tuning_box()->module_box(models::kLoraProj)->isChecked());
    QVERIFY(tab.session().plan == s.plan);
    QVERIFY2(tab.plan_error().isEmpty(), qPrintable(tab.plan_error()));
    // No adapted module with a rank: validate()'s message names the key.
    tab.fine_tuning_box()->module_box(models::kLoraQkv)->setChecked(false);
    tab.fine_tuning_box()->module_box(models::kLoraFc2)->setChecked(false);
    QVERIFY2(tab.plan_error().contains("lora_modules"), qPrintable(tab.plan_error()));
    // Packed documents longer than the sequence are refused.
    tab.fine_tuning_box()->module_box(models::kLoraQkv)->setChecked(true);
    tab.fine_tuning_box()->doc_box()->setValue(1 << 20);
    QVERIFY2(tab.plan_error().contains("packed_doc_tokens"), qPrintable(tab.plan_error()));
  }

  void megatron_flags_fill_the_plan() {
    ErrorReporter errors;
    WorkloadTab tab(&errors);
    Session s;
    s.model = "llama3-70b";
    s.cluster = "h100-rail-ndr";
    tab.set_session(s);
    tab.dense_box()->megatron_line()->setText(
        "--nnodes 8 --nproc-per-node 8 --tensor-model-parallel-size 4 --pipeline-model-parallel-size 8 --bf16 "
        "--use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather --global-batch-size 128 "
        "--cross-entropy-loss-fusion");
    QVERIFY2(tab.import_megatron_flags(), qPrintable(errors.last()));
    const models::Plan p = tab.session().plan;
    // --cross-entropy-loss-fusion without --cross-entropy-fusion-impl: Megatron-Core's native implementation.
    QCOMPARE(p.cross_entropy_fusion, models::CrossEntropyFusion::native);
    QCOMPARE(tab.dense_box()->cross_entropy_box()->currentText(), QString("native"));
    QCOMPARE(p.tp, 4);
    QCOMPARE(p.pp, 8);
    QCOMPARE(p.dp, 2);  // 64 GPUs / (4 x 8)
    QCOMPARE(p.zero, 1);
    QVERIFY(p.overlap_param_gather);
    tab.dense_box()->megatron_line()->setText("--bf16 --fp16 --nnodes 1 --nproc-per-node 8");
    QVERIFY(!tab.import_megatron_flags());
    QVERIFY(errors.last().contains("--fp16"));
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
