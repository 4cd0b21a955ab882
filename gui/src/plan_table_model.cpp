// Ranked plan table model (see plan_table_model.hpp); formats as cli/cmd_plan.cpp's text table.
#include "scalescope/gui/plan_table_model.hpp"

#include "scalescope/gui/chart_export.hpp"

#include <cassert>

namespace scalescope::gui {

namespace {
QString sv(std::string_view s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }
QString fixed(double v, int decimals) { return QString::number(v, 'f', decimals); }
}  // namespace

void PlanTableModel::set_plans(std::vector<planner::RankedPlan> plans) {
  beginResetModel();
  plans_ = std::move(plans);
  endResetModel();
}

const planner::RankedPlan& PlanTableModel::plan_at(int row) const {
  assert(row >= 0 && row < rowCount() && "PlanTableModel::plan_at: row out of range");
  return plans_[static_cast<std::size_t>(row)];
}

int PlanTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(plans_.size());
}

int PlanTableModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : kNumColumns; }

QVariant PlanTableModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() < 0 || index.row() >= rowCount() || index.column() < 0 ||
      index.column() >= kNumColumns)
    return {};
  const planner::RankedPlan& r = plans_[static_cast<std::size_t>(index.row())];
  const models::Plan& p = r.plan;
  if (role == Qt::DisplayRole) {
    switch (index.column()) {
      case kRank: return index.row() + 1;
      case kTp: return p.tp;
      case kPp: return p.pp;
      case kDp: return p.dp;
      case kZero: return p.zero;
      case kMbs: return p.mbs;
      case kSchedule: return sv(models::to_string(p.schedule));
      case kVpp: return p.vpp;
      case kRecompute: return sv(models::to_string(p.recompute));
      case kSp: return p.sp ? 1 : 0;
      case kStep: return fixed(r.step_time_s, 4);
      case kFlowStep: return r.flow_step_time_s ? fixed(*r.flow_step_time_s, 4) : QString("-");
      case kTokens: return fixed(r.tokens_per_s, 0);
      case kMfu: return fixed(100 * r.mfu, 1) + " %";
      case kMemory: return fixed(r.memory_GiB, 1);
      case kLimiter: return QString::fromStdString(r.limiter) + " " + fixed(100 * r.limiter_share, 0) + " %";
      default: return {};
    }
  }
  if (role == Qt::UserRole) {  // numbers for sorting
    switch (index.column()) {
      case kStep: return r.step_time_s;
      case kFlowStep: return r.flow_step_time_s.value_or(-1.0);
      case kTokens: return r.tokens_per_s;
      case kMfu: return r.mfu;
      case kMemory: return r.memory_GiB;
      case kLimiter: return QString::fromStdString(r.limiter);
      default: return data(index, Qt::DisplayRole);
    }
  }
  if (role == Qt::ToolTipRole) {
    return QString::fromStdString(models::to_string(p)) +
           QString("\nanalytical step %1 s%2; double-click to simulate it").arg(r.step_time_s, 0, 'g', 6)
               .arg(r.flow_step_time_s ? QString(", flow step %1 s").arg(*r.flow_step_time_s, 0, 'g', 6) : QString());
  }
  if (role == Qt::TextAlignmentRole && index.column() != kSchedule && index.column() != kRecompute &&
      index.column() != kLimiter)
    return QVariant(Qt::AlignRight | Qt::AlignVCenter);
  return {};
}

QVariant PlanTableModel::headerData(int section, Qt::Orientation o, int role) const {
  if (role != Qt::DisplayRole || o != Qt::Horizontal) return QAbstractTableModel::headerData(section, o, role);
  static const char* const names[kNumColumns] = {"#",  "tp",     "pp",       "dp",  "zero",    "mbs",
                                                 "schedule", "vpp", "recompute", "sp", "step s", "flow s",
                                                 "tokens/s", "MFU", "mem GiB", "limiter"};
  return section >= 0 && section < kNumColumns ? QString(names[section]) : QVariant();
}

QString PlanTableModel::to_csv() const {
  return table_to_csv(*this);
}

}  // namespace scalescope::gui
