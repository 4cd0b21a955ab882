// Timeline of one simulated iteration (see timeline_widget.hpp).
#include "scalescope/gui/timeline_widget.hpp"

#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <utility>

namespace scalescope::gui {

namespace {
constexpr double kLabelWidth = 120.0;
constexpr double kAxisHeight = 22.0;
}  // namespace

QColor category_color(TaskCategory c) {
  switch (c) {
    case TaskCategory::forward: return QColor(66, 133, 244);
    case TaskCategory::backward: return QColor(15, 82, 186);
    case TaskCategory::recompute: return QColor(142, 36, 170);
    case TaskCategory::optimizer: return QColor(0, 137, 123);
    case TaskCategory::tp_comm: return QColor(244, 81, 30);
    case TaskCategory::sp_comm: return QColor(255, 167, 38);
    case TaskCategory::dp_comm: return QColor(229, 57, 53);
    case TaskCategory::zero_comm: return QColor(216, 27, 96);
    case TaskCategory::pp_comm: return QColor(124, 179, 66);
    case TaskCategory::cp_comm: return QColor(0, 172, 193);
    case TaskCategory::ep_comm: return QColor(94, 53, 177);
    case TaskCategory::other: return QColor(120, 120, 120);
    case TaskCategory::host: return QColor(189, 189, 189);
  }
  return QColor(120, 120, 120);
}

TimelineWidget::TimelineWidget(QWidget* parent) : QWidget(parent) {
  setMouseTracking(true);
  setMinimumHeight(160);
}

std::optional<std::vector<int>> parse_rank_list(const QString& text, QString* error, int max_ranks) {
  std::vector<int> out;
  auto fail = [&](const QString& why) -> std::optional<std::vector<int>> {
    if (error) *error = why;
    return std::nullopt;
  };
  for (const QString& raw : text.split(',', Qt::SkipEmptyParts)) {
    const QString part = raw.trimmed();
    if (part.isEmpty()) continue;
    const QStringList ends = part.split('-');
    bool ok_a = false, ok_b = false;
    const int a = ends.value(0).trimmed().toInt(&ok_a);
    const int b = ends.size() == 2 ? ends.value(1).trimmed().toInt(&ok_b) : a;
    if (ends.size() > 2 || !ok_a || (ends.size() == 2 && !ok_b) || a < 0 || b < 0)
      return fail(QString("'%1' is not a rank or a range of ranks (expected e.g. 0-7, 64)").arg(part));
    if (b < a) return fail(QString("the range '%1' ends before it starts").arg(part));
    if (static_cast<long long>(b) - a + 1 + static_cast<long long>(out.size()) > max_ranks)
      return fail(QString("more than %1 ranks: name fewer (a timeline of more is not legible)").arg(max_ranks));
    for (int r = a; r <= b; ++r) out.push_back(r);
  }
  if (out.empty()) return fail("no rank named (expected e.g. 0-7, 64)");
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

void TimelineWidget::clear() {
  bars_.clear();
  row_names_.clear();
  shown_ranks_.clear();
  ranks_in_run_ = 0;
  step_ns_ = 0;
  view_start_ = 0;
  view_span_ = 1;
  update();
}

void TimelineWidget::set_run(const TaskGraph& graph, const SimResult& sim, const std::vector<int>& ranks) {
  clear();
  if (sim.task_times.size() != graph.size()) {
    update();
    return;
  }
  std::set<int> ran;
  for (TaskId id = 0; id < graph.size(); ++id)
    if (sim.task_times[id].start >= 0) ran.insert(int{graph.task(id).rank});
  ranks_in_run_ = static_cast<int>(ran.size());
  std::set<int> shown;
  if (ranks.empty()) {
    for (int r : ran) {
      if (static_cast<int>(shown.size()) == kDefaultRanks) break;
      shown.insert(r);
    }
  } else {
    for (int r : ranks)
      if (ran.count(r)) shown.insert(r);
  }
  shown_ranks_.assign(shown.begin(), shown.end());
  std::map<std::pair<int, int>, int> row_of;  // (rank, stream) -> row, in rank then stream order
  for (TaskId id = 0; id < graph.size(); ++id) {
    const Task& t = graph.task(id);
    if (sim.task_times[id].start >= 0 && shown.count(int{t.rank}))
      row_of.emplace(std::make_pair(int{t.rank}, int{t.stream}), 0);
  }
  int r = 0;
  for (auto& [key, row] : row_of) {
    row = r++;
    row_names_.push_back(QString("rank %1 %2").arg(key.first).arg(QString::fromStdString(graph.stream_name(key.second))));
  }
  for (TaskId id = 0; id < graph.size(); ++id) {
    const TaskTiming& tt = sim.task_times[id];
    if (tt.start < 0 || tt.end < tt.start) continue;
    const Task& t = graph.task(id);
    if (!shown.count(int{t.rank})) continue;
    Bar b;
    b.row = row_of.at({int{t.rank}, int{t.stream}});
    b.start_ns = tt.start;
    b.end_ns = tt.end;
    b.category = t.category;
    QString tip = QString("%1\n%2, %3\nrank %4, stream %5\nstart %6 ms, end %7 ms, %8 ms")
                      .arg(QString::fromStdString(graph.task_name(id)))
                      .arg(task_kind_name(t.kind))
                      .arg(task_category_name(t.category))
                      .arg(t.rank)
                      .arg(QString::fromStdString(graph.stream_name(t.stream)))
                      .arg(static_cast<double>(tt.start) * 1e-6, 0, 'f', 3)
                      .arg(static_cast<double>(tt.end) * 1e-6, 0, 'f', 3)
                      .arg(static_cast<double>(tt.end - tt.start) * 1e-6, 0, 'f', 3);
    if (t.is_comm()) tip += QString("\n%1 MB").arg(t.amount / 1e6, 0, 'f', 2);
    if (t.kind == TaskKind::compute && t.flops > 0) tip += QString("\n%1 GFLOP").arg(t.flops / 1e9, 0, 'f', 1);
    if (t.labels.microbatch >= 0) tip += QString("\nmicro-batch %1").arg(t.labels.microbatch);
    b.tip = tip;
    bars_.push_back(std::move(b));
  }
  step_ns_ = sim.step_ns;
  view_start_ = 0;
  view_span_ = std::max<double>(1.0, static_cast<double>(step_ns_));
  update();
}

double TimelineWidget::row_height() const {
  if (row_names_.empty()) return 20;
  return std::clamp((height() - kAxisHeight) / static_cast<double>(row_names_.size()), 4.0, 28.0);
}

double TimelineWidget::x_of(double ns) const {
  return kLabelWidth + (ns - view_start_) / view_span_ * std::max(1.0, width() - kLabelWidth - 4);
}

double TimelineWidget::ns_of(double x) const {
  return view_start_ + (x - kLabelWidth) / std::max(1.0, width() - kLabelWidth - 4) * view_span_;
}

void TimelineWidget::zoom(double factor, double anchor_x) {
  const double anchor = ns_of(anchor_x);
  const double span = std::clamp(view_span_ / factor, 100.0, std::max(100.0, 2.0 * static_cast<double>(step_ns_)));
  view_start_ = anchor - (anchor_x - kLabelWidth) / std::max(1.0, width() - kLabelWidth - 4) * span;
  view_span_ = span;
  update();
}

void TimelineWidget::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), Qt::white);
  if (bars_.empty()) {
    p.drawText(rect(), Qt::AlignCenter, "No timeline yet: run a simulation.");
    return;
  }
  const double rh = row_height();
  // Time axis with ~8 ticks at round values.
  const double raw = view_span_ / 8.0;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double tick = raw / mag < 2 ? 2 * mag : raw / mag < 5 ? 5 * mag : 10 * mag;
  p.setPen(QColor(200, 200, 200));
  for (double t = std::ceil(view_start_ / tick) * tick; t < view_start_ + view_span_; t += tick) {
    const double x = x_of(t);
    p.drawLine(QPointF(x, 0), QPointF(x, height()));
    p.setPen(Qt::black);
    p.drawText(QPointF(x + 2, 14), QString("%1 ms").arg(t * 1e-6, 0, 'g', 4));
    p.setPen(QColor(200, 200, 200));
  }
  p.setClipRect(QRectF(kLabelWidth, kAxisHeight, width() - kLabelWidth, height() - kAxisHeight));
  for (const Bar& b : bars_) {
    const double x0 = x_of(static_cast<double>(b.start_ns));
    const double x1 = x_of(static_cast<double>(b.end_ns));
    if (x1 < kLabelWidth || x0 > width()) continue;
    const QRectF r(x0, kAxisHeight + b.row * rh + 1, std::max(1.0, x1 - x0), rh - 2);
    p.fillRect(r, category_color(b.category));
  }
  p.setClipping(false);
  p.setPen(Qt::black);
  for (std::size_t i = 0; i < row_names_.size(); ++i) {
    if (rh < 9 && i % static_cast<std::size_t>(std::ceil(9 / rh)) != 0) continue;
    p.drawText(QRectF(2, kAxisHeight + static_cast<double>(i) * rh, kLabelWidth - 4, std::max(rh, 9.0)),
               Qt::AlignVCenter | Qt::AlignLeft, row_names_[i]);
  }
}

void TimelineWidget::wheelEvent(QWheelEvent* e) {
  const double steps = e->angleDelta().y() / 120.0;
  zoom(std::pow(1.25, steps), e->position().x());
  e->accept();
}

void TimelineWidget::mousePressEvent(QMouseEvent* e) {
  if (e->button() == Qt::LeftButton) {
    dragging_ = true;
    drag_x_ = e->position().x();
    drag_start_ = view_start_;
  }
}

void TimelineWidget::mouseMoveEvent(QMouseEvent* e) {
  if (!dragging_) return;
  view_start_ = drag_start_ - (e->position().x() - drag_x_) / std::max(1.0, width() - kLabelWidth - 4) * view_span_;
  update();
}

void TimelineWidget::mouseReleaseEvent(QMouseEvent*) { dragging_ = false; }

QString TimelineWidget::tooltip_at(QPointF pos) const {
  if (pos.x() < kLabelWidth || pos.y() < kAxisHeight) return {};
  const int row = static_cast<int>((pos.y() - kAxisHeight) / row_height());
  const double ns = ns_of(pos.x());
  const double slack = view_span_ / std::max(1.0, width() - kLabelWidth) * 2;  // 2 px
  for (const Bar& b : bars_) {
    if (b.row == row && ns >= static_cast<double>(b.start_ns) - slack && ns <= static_cast<double>(b.end_ns) + slack) return b.tip;
  }
  return {};
}

bool TimelineWidget::event(QEvent* e) {
  if (e->type() == QEvent::ToolTip) {
    auto* he = static_cast<QHelpEvent*>(e);
    const QString tip = tooltip_at(he->pos());
    if (tip.isEmpty()) {
      QToolTip::hideText();
    } else {
      QToolTip::showText(he->globalPos(), tip, this);
    }
    return true;
  }
  return QWidget::event(e);
}

}  // namespace scalescope::gui
