// Tab 5, measured vs predicted scaling (see scaling_tab.hpp).
#include "scalescope/gui/scaling_tab.hpp"

#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLegendMarker>
#include <QLogValueAxis>
#include <QScatterSeries>
#include <QSortFilterProxyModel>
#include <QSignalBlocker>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>
#include <QValueAxis>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

#include "scalescope/gui/chart_export.hpp"
#include "scalescope/gui/scaling_fit_chart.hpp"
#include "scalescope/models/stack_profile.hpp"
#include "scalescope/planner/measured_pricing.hpp"
#include "scalescope/sim/json_reader.hpp"

namespace scalescope::gui {

Expected<MeasuredPoint> load_measured_point(const std::filesystem::path& file) {
  auto doc = read_json_file(file);
  if (!doc) return doc.error();
  return catch_errors([&] {
    JsonCursor c(*doc, file.string());
    c.expect_object();
    const std::string schema = c.get_string("schema");
    if (schema != "scalescope.measured/1") c.at("schema").fail("expected \"scalescope.measured/1\", got \"" + schema + "\"");
    MeasuredPoint p;
    p.file = file.filename().string();
    p.spec = models::model_from_json(c.at("model").json(), file.string()).take_or_throw();
    p.model = p.spec.name;
    p.plan_text = c.get_string("plan");
    p.plan = models::parse_plan(p.plan_text, file.string() + ": $.plan").take_or_throw();
    p.cluster = c.get_string("cluster");
    p.gpus = static_cast<int>(c.get_positive_int("gpus"));
    p.family = c.get_string("family");
    p.scaling = c.get_string("scaling");
    p.measured_s = c.at("measured").get_positive("step_time_s");
    return p;
  });
}

std::vector<MeasuredPoint> load_measured_dir(const std::filesystem::path& dir, std::vector<Error>* errors) {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    if (e.path().extension() == ".json" && e.path().filename() != planner::kMeasuredPricingFile) files.push_back(e.path());
  }
  if (ec && errors != nullptr) errors->push_back(input_error(dir.string(), "", "cannot list the folder: " + ec.message()));
  std::sort(files.begin(), files.end());
  std::vector<MeasuredPoint> out;
  for (const auto& f : files) {
    auto p = load_measured_point(f);
    if (p) {
      out.push_back(std::move(p).value());
    } else if (errors != nullptr) {
      errors->push_back(p.error());
    }
  }
  return out;
}

void MeasuredModel::set_points(std::vector<MeasuredPoint> points) {
  beginResetModel();
  points_ = std::move(points);
  endResetModel();
}

int MeasuredModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(points_.size());
}
int MeasuredModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : kNumColumns; }

QVariant MeasuredModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount() || index.column() >= kNumColumns) return {};
  const MeasuredPoint& p = points_[static_cast<std::size_t>(index.row())];
  const bool predicted = p.predicted_s > 0;
  if (role == Qt::DisplayRole) {
    switch (index.column()) {
      case kFile: return QString::fromStdString(p.file);
      case kFamily: return QString::fromStdString(p.family);
      case kScaling: return QString::fromStdString(p.scaling);
      case kModel: return QString::fromStdString(p.model);
      case kGpus: return p.gpus;
      case kPlan: return QString("tp%1 pp%2 dp%3 z%4 mbs%5 gbs%6 %7")
                             .arg(p.plan.tp).arg(p.plan.pp).arg(p.plan.dp).arg(p.plan.zero).arg(p.plan.mbs).arg(p.plan.gbs)
                             .arg(QString::fromUtf8(models::to_string(p.plan.schedule).data()));
      case kMeasured: return QString::number(p.measured_s, 'f', 4);
      case kPredicted: return predicted ? QString::number(p.predicted_s, 'f', 4) : QString("n/a");
      case kError: return predicted ? QString("%1 %").arg(100 * p.error(), 0, 'f', 1) : QString("n/a");
      default: return {};
    }
  }
  if (role == Qt::UserRole) {  // numbers for sorting
    switch (index.column()) {
      case kGpus: return p.gpus;
      case kMeasured: return p.measured_s;
      case kPredicted: return p.predicted_s;
      case kError: return predicted ? p.error() : 0.0;
      default: return data(index, Qt::DisplayRole);
    }
  }
  if (role == Qt::ToolTipRole) return QString::fromStdString(p.plan_text + (p.note.empty() ? "" : "\n" + p.note));
  if (role == Qt::TextAlignmentRole && index.column() >= kGpus && index.column() != kPlan) {
    return QVariant(Qt::AlignRight | Qt::AlignVCenter);
  }
  return {};
}

QVariant MeasuredModel::headerData(int section, Qt::Orientation o, int role) const {
  if (role != Qt::DisplayRole || o != Qt::Horizontal) return QAbstractTableModel::headerData(section, o, role);
  static const char* const names[kNumColumns] = {"file", "family", "scaling", "model", "GPUs", "plan",
                                                 "measured s", "predicted s", "error"};
  return section >= 0 && section < kNumColumns ? QString(names[section]) : QVariant();
}

QString MeasuredModel::to_csv() const {
  return table_to_csv(*this);
}

ScalingTab::ScalingTab(const std::filesystem::path& measured_dir, QWidget* parent)
    : QWidget(parent), dir_(measured_dir) {
  auto* outer = new QVBoxLayout(this);
  auto* top = new QHBoxLayout;
  top->addWidget(new QLabel("Predict with calibration:"));
  calibration_ = new QComboBox;
  calibration_->addItem("(datasheet, no calibration)");
  for (const auto& n : profile_names()) calibration_->addItem(QString::fromStdString(n));
  if (calibration_->findText("h200x4") >= 0) calibration_->setCurrentText("h200x4");
  top->addWidget(calibration_);
  top->addWidget(new QLabel("Software stack:"));
  stack_ = new QComboBox;
  stack_->addItem("PyTorch eager + measured host cost (what the harness ran)");
  stack_->addItem("fused (Megatron-style)");
  stack_->setToolTip("As `scalescope scaling --framework pytorch-eager --host-cost "
                     "validation/profiles/h200-torch/host_dispatch.json` (eager byte table at F = 1, nothing fitted), "
                     "or the default fused pricing");
  top->addWidget(stack_);
  top->addWidget(new QLabel("Chart:"));
  scaling_ = new QComboBox;
  scaling_->addItems({"strong", "weak"});
  top->addWidget(scaling_);
  top->addWidget(new QLabel("Fit curve:"));
  curve_ = new QComboBox;
  curve_->setMinimumContentsLength(30);
  top->addWidget(curve_);
  top->addStretch(1);
  outer->addLayout(top);
  summary_ = new QLabel;
  summary_->setWordWrap(true);
  outer->addWidget(summary_);
  auto* split = new QSplitter(Qt::Vertical);
  chart_ = new QChartView;
  chart_->setRenderHint(QPainter::Antialiasing);
  install_export_menu(chart_, "scaling-step-time", nullptr);
  speedup_chart_ = new QChartView;
  speedup_chart_->setRenderHint(QPainter::Antialiasing);
  install_export_menu(speedup_chart_, "scaling-speedup-fits", nullptr);
  auto* charts = new QSplitter(Qt::Horizontal);
  charts->addWidget(chart_);
  charts->addWidget(speedup_chart_);
  split->addWidget(charts);
  model_ = new MeasuredModel(this);
  auto* proxy = new QSortFilterProxyModel(this);
  proxy->setSourceModel(model_);
  proxy->setSortRole(Qt::UserRole);
  table_ = new QTableView;
  table_->setModel(proxy);
  table_->setSortingEnabled(true);
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->verticalHeader()->hide();
  split->addWidget(table_);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);
  outer->addWidget(split, 1);
  connect(calibration_, &QComboBox::currentTextChanged, this, [this](const QString& t) {
    reload(t.startsWith('(') ? std::string() : t.toStdString());
  });
  connect(stack_, &QComboBox::currentIndexChanged, this, [this] {
    const QString t = calibration_->currentText();
    reload(t.startsWith('(') ? std::string() : t.toStdString());
  });
  connect(scaling_, &QComboBox::currentTextChanged, this, [this] {
    rebuild_chart();
    fill_curve_box();
  });
  connect(curve_, &QComboBox::currentIndexChanged, this, &ScalingTab::rebuild_speedup_chart);
}

QString ScalingTab::summary() const { return summary_->text(); }

void ScalingTab::reload(const std::string& calibration) {
  std::vector<Error> errors;
  auto points = load_measured_dir(dir_, &errors);
  // The eager stack: plain PyTorch kernels and the host cost measured beside the runs: the set's own
  // (<validation>/<set>/host_dispatch.json, measured on the lease that ran <set>/measured) where there is
  // one, else <validation>/profiles/h200-torch/host_dispatch.json. Host speed differs between leases.
  const bool eager = stack_->currentIndex() == 0;
  std::optional<models::FrameworkHostCost> host;
  QString stack_note = "fused kernels";
  if (eager) {
    const auto own = dir_.parent_path() / "host_dispatch.json";
    const auto host_file = std::filesystem::exists(own)
                               ? own
                               : dir_.parent_path().parent_path() / "profiles" / "h200-torch" / "host_dispatch.json";
    auto h = models::load_framework_host_cost(host_file.string());
    if (h) host = std::move(h).value();
    stack_note = h ? QString("PyTorch eager, F = 1, host cost %1").arg(QString::fromStdString(host_file.string()))
                   : QString("PyTorch eager, F = 1, no host cost (%1)").arg(QString::fromStdString(h.error().str()));
  }
  std::vector<double> abs_err;
  for (MeasuredPoint& p : points) {
    Session s;
    s.model = p.model;
    s.plan = p.plan;
    s.cluster = p.cluster;
    s.nodes = 0;
    s.calibration = calibration;
    auto in = cache_.get(p.spec, s);
    if (!in) {
      p.note = in.error().str();
      continue;
    }
    if (eager && in->compute) {
      static const auto eager_stack = models::load_stack("pytorch-eager");
      if (eager_stack) in->compute->set_stack(*eager_stack);
      in->compute->set_host_cost(host);
    }
    auto pred = predict(*in, "analytical", false);
    if (!pred) {
      p.note = pred.error().str();
      continue;
    }
    p.predicted_s = pred->step_time_s;
    abs_err.push_back(std::fabs(p.error()));
  }
  std::sort(abs_err.begin(), abs_err.end());
  const double median = abs_err.empty() ? 0.0 : abs_err[abs_err.size() / 2];
  QString text = QString("%1 measured runs from %2; %3 predicted (analytical, calibration %4, %6); median |error| %5 %.")
                     .arg(points.size())
                     .arg(QString::fromStdString(dir_.string()))
                     .arg(abs_err.size())
                     .arg(calibration.empty() ? QString("none") : QString::fromStdString(calibration))
                     .arg(100 * median, 0, 'f', 1)
                     .arg(stack_note);
  if (!errors.empty()) text += QString(" %1 file(s) could not be read, first: %2").arg(errors.size()).arg(QString::fromStdString(errors.front().str()));
  curves_ = scaling_curves(points);
  text += QString(" %1 scaling curves; fits: Amdahl (strong), Gustafson (weak), as `scalescope scaling`.").arg(curves_.size());
  summary_->setText(text);
  model_->set_points(std::move(points));
  rebuild_chart();
  fill_curve_box();
}

void ScalingTab::fill_curve_box() {
  const planner::ScalingKind kind =
      scaling_->currentText() == "weak" ? planner::ScalingKind::weak : planner::ScalingKind::strong;
  QSignalBlocker block(curve_);
  curve_->clear();
  curve_->addItem("all curves", -1);
  int best = -1;
  std::size_t best_points = 0;
  for (std::size_t i = 0; i < curves_.size(); ++i) {
    if (curves_[i].scaling != kind) continue;
    curve_->addItem(curve_label(curves_[i]), static_cast<int>(i));
    if (curves_[i].points.size() > best_points) {  // default: the curve with the most points
      best_points = curves_[i].points.size();
      best = curve_->count() - 1;
    }
  }
  curve_->setCurrentIndex(std::max(best, 0));
  rebuild_speedup_chart();
}

void ScalingTab::show_curve(int index) {
  if (index >= 0 && static_cast<std::size_t>(index) < curves_.size())
    scaling_->setCurrentText(QString::fromUtf8(planner::to_string(curves_[static_cast<std::size_t>(index)].scaling).data()));
  const int at = curve_->findData(index);
  if (at >= 0) curve_->setCurrentIndex(at);
  rebuild_speedup_chart();
}

void ScalingTab::rebuild_speedup_chart() {
  const planner::ScalingKind kind =
      scaling_->currentText() == "weak" ? planner::ScalingKind::weak : planner::ScalingKind::strong;
  const int only = curve_->currentIndex() >= 0 ? curve_->currentData().toInt() : -1;
  QChart* old = speedup_chart_->chart();
  speedup_chart_->setChart(build_speedup_chart(curves_, kind, only));
  delete old;
}

void ScalingTab::rebuild_chart() {
  auto* chart = new QChart;
  const std::string scaling = scaling_->currentText().toStdString();
  chart->setTitle(QString("%1 scaling: step time vs GPUs (circles measured, squares predicted: error)")
                      .arg(scaling_->currentText()));
  auto* x = new QValueAxis;
  x->setTitleText("GPUs");
  x->setLabelFormat("%d");
  auto* y = new QLogValueAxis;
  y->setTitleText("step time (s)");
  y->setBase(10);
  y->setLabelFormat("%.2g");
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);
  static const QColor palette[] = {QColor(66, 133, 244), QColor(219, 68, 55), QColor(244, 180, 0), QColor(15, 157, 88),
                                   QColor(171, 71, 188), QColor(0, 172, 193), QColor(255, 112, 67),
                                   QColor(121, 85, 72), QColor(96, 125, 139), QColor(0, 0, 0)};
  std::map<std::string, QScatterSeries*> measured;
  double lo = 1e9, hi = 0;
  int max_gpus = 1;
  for (const MeasuredPoint& p : model_->points()) {
    if (p.scaling != scaling) continue;
    auto it = measured.find(p.family);
    if (it == measured.end()) {
      auto* s = new QScatterSeries;
      s->setName(QString::fromStdString(p.family));
      s->setMarkerShape(QScatterSeries::MarkerShapeCircle);
      s->setMarkerSize(9);
      s->setColor(palette[measured.size() % 10]);
      it = measured.emplace(p.family, s).first;
    }
    // Small x offset per family so points of one GPU count do not hide each other.
    const double dx = 0.06 * (static_cast<double>(std::distance(measured.begin(), it)) - 2.0);
    it->second->append(p.gpus + dx, p.measured_s);
    lo = std::min(lo, p.measured_s);
    hi = std::max(hi, p.measured_s);
    max_gpus = std::max(max_gpus, p.gpus);
    if (p.predicted_s > 0) {
      auto* s = new QScatterSeries;
      s->setMarkerShape(QScatterSeries::MarkerShapeRectangle);
      s->setMarkerSize(7);
      s->setColor(it->second->color().lighter(130));
      s->append(p.gpus + dx + 0.03, p.predicted_s);
      s->setPointLabelsFormat(QString("%1%2%").arg(p.error() >= 0 ? "+" : "").arg(100 * p.error(), 0, 'f', 0));
      s->setPointLabelsVisible(true);
      s->setPointLabelsClipping(false);
      QFont f = s->pointLabelsFont();
      f.setPointSizeF(7);
      s->setPointLabelsFont(f);
      chart->addSeries(s);
      s->attachAxis(x);
      s->attachAxis(y);
      for (QLegendMarker* m : chart->legend()->markers(s)) m->setVisible(false);
      lo = std::min(lo, p.predicted_s);
      hi = std::max(hi, p.predicted_s);
    }
  }
  for (auto& [family, s] : measured) {
    chart->addSeries(s);
    s->attachAxis(x);
    s->attachAxis(y);
  }
  x->setRange(0, max_gpus + 1);
  x->setTickCount(max_gpus + 2);
  if (hi > 0) y->setRange(lo / 1.3, hi * 1.3);
  QChart* old = chart_->chart();
  chart_->setChart(chart);
  delete old;
}

}  // namespace scalescope::gui
