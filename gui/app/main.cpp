// scalescope-gui: the desktop app; `--screenshot FILE [--tab NAME] [session]` renders a tab to an
// image without showing a window.
#include <QApplication>
#include <QCommandLineParser>
#include <QEventLoop>
#include <QScreen>
#include <QTabWidget>
#include <QTimer>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "scalescope/gui/chart_export.hpp"
#include "scalescope/gui/error_reporter.hpp"
#include "scalescope/gui/main_window.hpp"
#include "scalescope/gui/planner_tab.hpp"

int main(int argc, char** argv) {
  // Screenshots need no display: default to the offscreen platform unless one was chosen.
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--screenshot") == 0 && std::getenv("QT_QPA_PLATFORM") == nullptr) {
      qputenv("QT_QPA_PLATFORM", "offscreen");
    }
  }
  QApplication app(argc, argv);
  QApplication::setApplicationName("scalescope-gui");
  QCommandLineParser parser;
  parser.setApplicationDescription(
      "scalescope desktop app: workload and plan editor, simulation with breakdown and timeline, cluster graph, "
      "what-if sliders, measured-vs-predicted scaling with Amdahl/Gustafson fits, and the plan search.");
  parser.addHelpOption();
  QCommandLineOption shot("screenshot", "Render the window to FILE (.png or .svg) without showing it, then exit.", "FILE");
  QCommandLineOption tab("tab", "Tab to show: workload, simulation, cluster, whatif, scaling, planner (the planner tab runs its search first).", "NAME");
  parser.addOption(shot);
  parser.addOption(tab);
  parser.addPositionalArgument("session", "A session JSON file to open (optional).", "[session]");
  parser.process(app);
  const bool screenshot = parser.isSet(shot);

  scalescope::gui::MainWindow w(!screenshot);
  const QStringList args = parser.positionalArguments();
  if (args.size() > 1) {
    std::fprintf(stderr, "scalescope-gui: error: expected at most one session file\n");
    return 2;
  }
  if (!args.isEmpty() && !w.open_session(args.front())) {
    if (screenshot) {
      std::fprintf(stderr, "scalescope-gui: error: %s\n", qPrintable(w.errors()->last()));
      return 2;
    }
  }
  if (screenshot) {
    int rc = 0;
    if (!w.simulate()) {
      std::fprintf(stderr, "scalescope-gui: error: %s\n", qPrintable(w.errors()->last()));
      rc = 1;
    }
    const QString name = parser.isSet(tab) ? parser.value(tab) : QString("simulation");
    if (!w.select_tab(name)) {
      std::fprintf(stderr, "scalescope-gui: error: --tab: expected workload | simulation | cluster | whatif | scaling | planner, got '%s'\n",
                   qPrintable(name));
      return 2;
    }
    if (name == "scaling") w.ensure_scaling_loaded();
    if (name == "planner" && !w.planner()->run_blocking()) {
      std::fprintf(stderr, "scalescope-gui: error: %s\n", qPrintable(w.errors()->last()));
      rc = 1;
    }
    // Offscreen: render without a window. A real platform (e.g. xcb under Xvfb): show the window,
    // let it be mapped and painted, then take the pixels from the screen (what a user would see).
    const bool real_window = QGuiApplication::platformName() != "offscreen";
    if (!real_window) w.setAttribute(Qt::WA_DontShowOnScreen);
    w.show();
    QApplication::processEvents();
    if (real_window) {
      w.raise();
      QEventLoop loop;
      QTimer::singleShot(1500, &loop, &QEventLoop::quit);
      loop.exec();
    }
    const QString file = parser.value(shot);
    bool ok = false;
    QString why;
    if (real_window && !file.endsWith(".svg", Qt::CaseInsensitive)) {
      const QRect g = w.frameGeometry();
      QScreen* screen = w.screen();
      ok = screen != nullptr && scalescope::gui::save_pixmap(screen->grabWindow(0, g.x(), g.y(), g.width(), g.height()),
                                                             file, &why);
    } else {
      ok = scalescope::gui::export_widget(&w, file, &why);
    }
    if (!ok) {
      std::fprintf(stderr, "scalescope-gui: error: cannot write %s: %s\n", qPrintable(file), qPrintable(why));
      return 1;
    }
    std::fprintf(stderr, "scalescope-gui: wrote %s (tab %s)\n", qPrintable(file), qPrintable(name));
    return rc;
  }
  w.show();
  return QApplication::exec();
}
