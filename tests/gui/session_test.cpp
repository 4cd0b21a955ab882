// Sessions: JSON round trip, and opening malformed or foreign files reports an error and keeps state.
#include <QTemporaryDir>
#include <QtTest>
#include <fstream>

#include "scalescope/gui/error_reporter.hpp"
#include "scalescope/gui/main_window.hpp"
#include "scalescope/gui/workload_tab.hpp"

using namespace scalescope;
using namespace scalescope::gui;

namespace {
void write(const QString& file, const std::string& text) { std::ofstream(file.toStdString()) << text; }
}  // namespace

class SessionTest : public QObject {
  Q_OBJECT
 private slots:
  void session_json_round_trip() {
    Session s;
    s.model = "gpt3-175b";
    s.cluster = "h100-rail-ndr";
    s.nodes = 16;
    s.plan.tp = 8;
    s.plan.pp = 8;
    s.plan.dp = 2;
    s.plan.gbs = 64;
    s.nvlink_scale = 1.5;
    s.interference = false;
    s.tab = "cluster";
    auto back = session_from_json(session_to_json(s), "mem");
    QVERIFY(back.has_value());
    QVERIFY(back->plan == s.plan);
    QCOMPARE(back->cluster, s.cluster);
    QCOMPARE(back->nodes, 16);
    QCOMPARE(back->nvlink_scale, 1.5);
    QCOMPARE(back->interference, false);
    QCOMPARE(back->tab, std::string("cluster"));
  }

  void unknown_key_is_rejected_with_its_name() {
    Json j = session_to_json(Session{});
    j["nodez"] = 3;
    auto s = session_from_json(j, "x.json");
    QVERIFY(!s.has_value());
    QVERIFY2(s.error().str().find("nodez") != std::string::npos, s.error().str().c_str());
  }

  void malformed_file_reports_error_and_keeps_state() {
    QTemporaryDir dir;
    MainWindow w(false);
    Session s;
    s.model = "llama2-13b";
    s.plan.tp = 4;
    s.plan.gbs = 16;
    w.workload()->set_session(s);
    const QString bad = dir.filePath("broken.json");
    write(bad, "{ \"schema\": \"scalescope.gui_session/1\", \"model\": ");  // truncated JSON
    QVERIFY(!w.open_session(bad));
    QCOMPARE(w.errors()->messages().size(), 1);
    QVERIFY(w.errors()->last().contains("broken.json"));
    QCOMPARE(w.workload()->session().model, std::string("llama2-13b"));
    QCOMPARE(w.workload()->session().plan.tp, 4);
  }

  void foreign_file_reports_schema_and_keeps_state() {
    MainWindow w(false);
    Session s;
    s.model = "llama2-7b";
    w.workload()->set_session(s);
    // A cluster file is valid JSON but not a session: it lacks "schema" and has other keys.
    QVERIFY(!w.open_session(QString(SCALESCOPE_SOURCE_DIR) + "/topologies/hgx-h200-4.json"));
    QVERIFY(w.errors()->last().contains("hgx-h200-4.json"));
    QCOMPARE(w.workload()->session().model, std::string("llama2-7b"));
  }

  void saved_session_opens_again() {
    QTemporaryDir dir;
    MainWindow w(false);
    Session s;
    s.model = "llama3-70b";
    s.cluster = "hgx-h200-8";
    s.plan.tp = 8;
    s.plan.pp = 4;
    s.plan.dp = 1;
    s.plan.gbs = 32;
    w.workload()->set_session(s);
    const QString f = dir.filePath("s.json");
    QVERIFY(w.save_session_as(f));
    MainWindow w2(false);
    QVERIFY(w2.open_session(f));
    QVERIFY(w2.workload()->session().plan == s.plan);
    QCOMPARE(w2.workload()->session().model, std::string("llama3-70b"));
  }
};

QTEST_MAIN(SessionTest)
#include "session_test.moc"
