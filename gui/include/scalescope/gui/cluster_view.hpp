// Tab 3, cluster view: the cluster graph drawn with GPUs, switches, CPUs and NICs, links coloured
// by kind with their bandwidths in tooltips and the legend; clusters of more than four nodes are
// collapsed to one box per node (its links to the fabric aggregated), clusters of more than 64 nodes to
// one box per group of consecutive nodes, and fabric tiers of more than 64 switches to one box per group of
// switches, so that a 100k-GPU cluster draws as fast and as legibly as a rack.
#pragma once

#include <QColor>
#include <QLineF>
#include <QRectF>
#include <QString>
#include <QWidget>
#include <vector>

#include "scalescope/sim/cluster.hpp"

namespace scalescope::gui {

class ClusterView : public QWidget {
  Q_OBJECT
 public:
  /// Positions in [0,1] x [0,1] (scaled to the widget when painted).
  struct Item {
    QRectF box;
    QString label, tip;
    QColor color;
    bool node = false;  ///< a node's box (devices are drawn inside it)
  };
  struct Wire {
    QLineF line;
    QColor color;
    double width = 1;
    QString tip;
  };

  explicit ClusterView(QWidget* parent = nullptr);
  void set_cluster(const Cluster& cluster);
  bool collapsed() const { return collapsed_; }
  /// Nodes drawn in one box (1 up to 64 nodes).
  int node_group() const { return node_group_; }
  const std::vector<Item>& items() const { return items_; }
  const std::vector<Wire>& wires() const { return wires_; }
  QString tooltip_at(QPointF pos) const;

 protected:
  void paintEvent(QPaintEvent*) override;
  bool event(QEvent*) override;

 private:
  QRectF to_widget(const QRectF& r) const;
  QPointF to_widget(QPointF p) const;

  std::vector<Item> items_;
  std::vector<Wire> wires_;
  QStringList legend_;
  QString title_;
  bool collapsed_ = false;
  int node_group_ = 1;
};

QColor link_color(LinkKind k);

}  // namespace scalescope::gui
