// The ranked plan table of the planner tab: one row per planner::RankedPlan, the columns and the
// number formats of `scalescope plan` (text), numbers in Qt::UserRole for sorting.
#pragma once

#include <QAbstractTableModel>
#include <vector>

#include "scalescope/planner/search.hpp"

namespace scalescope::gui {

class PlanTableModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column {
    kRank, kTp, kPp, kDp, kZero, kMbs, kSchedule, kVpp, kRecompute, kSp,
    kStep, kFlowStep, kTokens, kMfu, kMemory, kLimiter, kNumColumns
  };
  explicit PlanTableModel(QObject* parent = nullptr) : QAbstractTableModel(parent) {}
  /// Rows in the planner's order (rank = position + 1).
  void set_plans(std::vector<planner::RankedPlan> plans);
  const std::vector<planner::RankedPlan>& plans() const { return plans_; }
  /// The plan of a source-model row (assert: in range).
  const planner::RankedPlan& plan_at(int row) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;
  /// RFC 4180 CSV of the table (display text, header first).
  QString to_csv() const;

 private:
  std::vector<planner::RankedPlan> plans_;
};

}  // namespace scalescope::gui
