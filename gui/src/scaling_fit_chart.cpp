// Speedup chart with Amdahl / Gustafson fits for the scaling tab (see scaling_fit_chart.hpp).
#include "scalescope/gui/scaling_fit_chart.hpp"

#include <QChart>
#include <QLegendMarker>
#include <QLineSeries>
#include <QFont>
#include <QLegend>
#include <QPen>
#include <QScatterSeries>
#include <QValueAxis>
#include <algorithm>
#include <map>

#include "scalescope/gui/scaling_tab.hpp"

namespace scalescope::gui {

std::vector<planner::ScalingCurve> scaling_curves(const std::vector<MeasuredPoint>& points) {
  std::vector<planner::MeasuredRun> runs;
  std::map<std::string, double> predicted;  // file -> predicted step time
  for (const MeasuredPoint& p : points) {
    if (p.scaling != "strong" && p.scaling != "weak") continue;
    planner::MeasuredRun r;
    r.file = p.file;
    r.model = p.spec;
    r.plan = p.plan;
    r.cluster = p.cluster;
    r.gpus = p.gpus;
    r.family = p.family;
    r.scaling = p.scaling == "strong" ? planner::ScalingKind::strong : planner::ScalingKind::weak;
    r.step_time_s = p.measured_s;
    runs.push_back(std::move(r));
    if (p.predicted_s > 0) predicted[p.file] = p.predicted_s;
  }
  std::vector<planner::ScalingCurve> curves = planner::group_curves(runs);
  for (auto& c : curves) {
    for (auto& pt : c.points) {
      if (auto it = predicted.find(pt.file); it != predicted.end()) pt.predicted_s = it->second;
    }
    planner::finish_curve(c);
  }
  return curves;
}

QString curve_label(const planner::ScalingCurve& c) {
  QString t = QString("%1 %2 mbs %3").arg(QString::fromStdString(c.family), QString::fromStdString(c.model)).arg(c.mbs);
  return c.scaling == planner::ScalingKind::strong ? t + QString(" gbs %1").arg(c.batch)
                                                   : t + QString(" %1 seq/GPU").arg(c.batch);
}

double fitted_speedup(const planner::ScalingCurve& c, double s, double x) {
  return c.scaling == planner::ScalingKind::strong ? planner::amdahl_speedup(s, x) : planner::gustafson_speedup(s, x);
}

QChart* build_speedup_chart(const std::vector<planner::ScalingCurve>& curves, planner::ScalingKind kind, int only) {
  auto* chart = new QChart;
  const bool strong = kind == planner::ScalingKind::strong;
  chart->setTitle(QString("%1 scaling speedup, %2 fits (solid measured, dashed predicted)")
                      .arg(strong ? "Strong" : "Weak", strong ? "Amdahl" : "Gustafson"));
  auto* x = new QValueAxis;
  x->setTitleText("GPUs");
  x->setLabelFormat("%d");
  auto* y = new QValueAxis;
  y->setTitleText(strong ? "speedup T(n0) / T(n)" : "scaled speedup (throughput ratio)");
  y->setLabelFormat("%.2f");
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);
  static const QColor palette[] = {QColor(66, 133, 244), QColor(219, 68, 55), QColor(244, 180, 0), QColor(15, 157, 88),
                                   QColor(171, 71, 188), QColor(0, 172, 193), QColor(255, 112, 67), QColor(121, 85, 72)};
  auto add = [&](QAbstractSeries* s, bool legend) {
    chart->addSeries(s);
    s->attachAxis(x);
    s->attachAxis(y);
    if (!legend)
      for (QLegendMarker* m : chart->legend()->markers(s)) m->setVisible(false);
  };
  double hi = 1;
  int max_gpus = 1, shown = 0;
  for (std::size_t ci = 0; ci < curves.size(); ++ci) {
    const planner::ScalingCurve& c = curves[ci];
    if (c.scaling != kind || (only >= 0 && static_cast<std::size_t>(only) != ci)) continue;
    const QColor color = palette[shown++ % 8];
    auto* meas = new QScatterSeries;
    const QString prefix = only >= 0 ? QString() : QString::fromStdString(c.family) + " ";
    meas->setName(prefix + "measured");
    meas->setColor(color);
    meas->setMarkerSize(10);
    for (const auto& p : c.points) {
      max_gpus = std::max(max_gpus, p.gpus);
      if (p.measured_speedup) {
        meas->append(p.gpus, *p.measured_speedup);
        hi = std::max(hi, *p.measured_speedup);
      }
      if (p.predicted_speedup) {
        auto* pr = new QScatterSeries;
        pr->setMarkerShape(QScatterSeries::MarkerShapeRectangle);
        pr->setMarkerSize(8);
        pr->setColor(color.lighter(140));
        pr->append(p.gpus, *p.predicted_speedup);
        if (p.error) {
          pr->setPointLabelsFormat(QString("%1%2%").arg(*p.error >= 0 ? "+" : "").arg(100 * *p.error, 0, 'f', 1));
          pr->setPointLabelsVisible(true);
          pr->setPointLabelsClipping(false);
        }
        add(pr, false);
        hi = std::max(hi, *p.predicted_speedup);
      }
    }
    add(meas, true);
    const double n0 = c.base_gpus;
    auto fit_line = [&](const std::optional<planner::ScalingFit>& f, bool dashed, const QString& what) {
      if (!f) return;
      auto* line = new QLineSeries;
      line->setName(QString("%1%2 fit (%3): s=%4 R\u00b2=%5")
                        .arg(prefix, strong ? "Amdahl" : "Gustafson", what)
                        .arg(f->serial_fraction, 0, 'g', 3)
                        .arg(f->r2, 0, 'f', 3));
      QPen pen(dashed ? color.lighter(140) : color);
      pen.setWidthF(2);
      if (dashed) pen.setStyle(Qt::DashLine);
      line->setPen(pen);
      const double last = std::max(1.0, static_cast<double>(max_gpus) / n0);
      for (int i = 0; i <= 40; ++i) {
        const double xr = 1 + (last - 1) * i / 40.0;
        const double v = fitted_speedup(c, f->serial_fraction, xr);
        line->append(n0 * xr, v);
        hi = std::max(hi, v);
      }
      add(line, true);
    };
    fit_line(c.measured_fit, false, "measured");
    fit_line(c.predicted_fit, true, "predicted");
  }
  x->setRange(0, max_gpus + 1);
  x->setTickCount(max_gpus + 2);
  y->setRange(0, hi * 1.15);
  chart->legend()->setAlignment(Qt::AlignBottom);
  QFont small = chart->legend()->font();
  small.setPointSizeF(small.pointSizeF() * 0.85);
  chart->legend()->setFont(small);
  return chart;
}

}  // namespace scalescope::gui
