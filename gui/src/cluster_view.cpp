// Tab 3, cluster graph drawing (see cluster_view.hpp).
#include "scalescope/gui/cluster_view.hpp"

#include <QHelpEvent>
#include <QPainter>
#include <QToolTip>
#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <tuple>

namespace scalescope::gui {

namespace {
constexpr double kTop = 0.08;      // title + legend band
constexpr double kFabric = 0.40;   // fabric tiers occupy [kTop, kFabric)
constexpr double kMargin = 0.01;
// Above these, consecutive nodes (and the switches of one tier) share a box: a 16,384-GPU cluster draws at most
// 64 node boxes and 64 boxes per fabric tier, whatever its size.
constexpr int kMaxNodeBoxes = 64;
constexpr int kMaxTierBoxes = 64;

int per_box(int count, int max_boxes) { return count > max_boxes ? (count + max_boxes - 1) / max_boxes : 1; }

QString range_label(const QString& what, int first, int last) {
  return first == last ? QString("%1 %2").arg(what).arg(first) : QString("%1 %2-%3").arg(what).arg(first).arg(last);
}

QString gbps(BytesPerSecond b) { return QString("%1 GB/s").arg(b.value / 1e9, 0, 'f', 1); }

QColor vertex_color(VertexKind k) {
  switch (k) {
    case VertexKind::gpu: return QColor(118, 185, 0);
    case VertexKind::nvswitch: return QColor(0, 121, 107);
    case VertexKind::pcie_switch: return QColor(141, 110, 99);
    case VertexKind::cpu: return QColor(96, 125, 139);
    case VertexKind::nic: return QColor(255, 179, 0);
    case VertexKind::fabric_switch: return QColor(63, 81, 181);
    case VertexKind::host_memory: return QColor(158, 158, 158);
  }
  return Qt::gray;
}

int row_of(VertexKind k) {  // rows inside a node box, top to bottom
  switch (k) {
    case VertexKind::nic: return 0;
    case VertexKind::pcie_switch: return 1;
    case VertexKind::cpu: return 2;
    case VertexKind::gpu: return 3;
    case VertexKind::nvswitch: return 4;
    case VertexKind::fabric_switch: return 0;
    case VertexKind::host_memory: return 2;
  }
  return 0;
}
}  // namespace

QColor link_color(LinkKind k) {
  switch (k) {
    case LinkKind::nvlink: return QColor(118, 185, 0);
    case LinkKind::pcie: return QColor(121, 85, 72);
    case LinkKind::upi: return QColor(96, 125, 139);
    case LinkKind::ib: return QColor(30, 136, 229);
    case LinkKind::roce: return QColor(142, 36, 170);
    case LinkKind::ethernet: return QColor(229, 57, 53);
    case LinkKind::memory: return QColor(158, 158, 158);
  }
  return Qt::gray;
}

ClusterView::ClusterView(QWidget* parent) : QWidget(parent) {
  setMouseTracking(true);
  setMinimumSize(400, 300);
}

void ClusterView::set_cluster(const Cluster& c) {
  items_.clear();
  wires_.clear();
  legend_.clear();
  const int nodes = c.num_nodes();
  collapsed_ = nodes > 4;
  node_group_ = per_box(nodes, kMaxNodeBoxes);
  const int boxes = (nodes + node_group_ - 1) / node_group_;
  title_ = QString("%1: %2 node(s) x %3 %4, %5 GPUs, fabric %6%7")
               .arg(QString::fromStdString(c.name()))
               .arg(nodes)
               .arg(c.gpus_per_node())
               .arg(QString::fromStdString(c.gpu_spec().model))
               .arg(c.num_gpus())
               .arg(QString::fromStdString(std::string(to_string(c.fabric_kind()))))
               .arg(!collapsed_ ? QString()
                    : node_group_ > 1 ? QString(" (collapsed: %1 nodes per box)").arg(node_group_)
                                      : QString(" (collapsed by node)"));
  const int nv = c.num_vertices();
  // Per-vertex position (center) and, for collapsed node devices, the node's item index.
  std::vector<QPointF> pos(static_cast<std::size_t>(nv));
  std::vector<int> item_of(static_cast<std::size_t>(nv), -1);
  // Fabric switches by tier (highest tier on top).
  std::map<int, std::vector<int>, std::greater<>> tiers;
  std::map<std::pair<int, int>, std::vector<int>> in_node;  // (node, row) -> vertices
  for (int v = 0; v < nv; ++v) {
    const VertexProps& p = c.vertex(static_cast<VertexId>(v));
    if (p.kind == VertexKind::fabric_switch) {
      tiers[p.tier].push_back(v);
    } else {
      in_node[{p.node, row_of(p.kind)}].push_back(v);
    }
  }
  const double node_w = (1.0 - 2 * kMargin) / std::max(1, boxes);
  const double node_top = tiers.empty() ? kTop : kFabric;
  const double node_h = 1.0 - node_top - kMargin;
  // Node boxes: one per node, or per node_group_ consecutive nodes on large clusters.
  for (int b = 0; b < boxes; ++b) {
    const int first = b * node_group_, last = std::min(nodes, first + node_group_) - 1;
    Item box;
    box.box = QRectF(kMargin + b * node_w + node_w * 0.03, node_top, node_w * 0.94, node_h);
    box.label = node_group_ > 1 ? range_label("n", first, last).remove(' ')
                : collapsed_    ? QString("n%1").arg(first)
                                : QString("node %1").arg(first);
    const int n_in = last - first + 1;
    box.tip = QString("%1: %2 x %3 %4 (%5 GPUs, ranks %6-%7)")
                  .arg(range_label(n_in > 1 ? "nodes" : "node", first, last))
                  .arg(n_in)
                  .arg(c.gpus_per_node())
                  .arg(QString::fromStdString(c.gpu_spec().model))
                  .arg(n_in * c.gpus_per_node())
                  .arg(first * c.gpus_per_node())
                  .arg((last + 1) * c.gpus_per_node() - 1);
    box.color = QColor(245, 245, 245);
    box.node = true;
    items_.push_back(box);
    if (collapsed_) {
      const int idx = static_cast<int>(items_.size()) - 1;
      for (int n = first; n <= last; ++n) {
        for (int row = 0; row <= 4; ++row) {
          auto it = in_node.find({n, row});
          if (it == in_node.end()) continue;
          for (int v : it->second) {
            pos[static_cast<std::size_t>(v)] = QPointF(box.box.center().x(), node_top);
            item_of[static_cast<std::size_t>(v)] = idx;
          }
        }
      }
    }
  }
  if (!collapsed_) {
    for (const auto& [key, verts] : in_node) {
      const auto [n, row] = key;
      const QRectF nb = items_[static_cast<std::size_t>(n)].box;
      const double rh = nb.height() / 5.0;
      const double w = nb.width() / static_cast<double>(verts.size());
      for (std::size_t i = 0; i < verts.size(); ++i) {
        const VertexProps& p = c.vertex(static_cast<VertexId>(verts[i]));
        Item it;
        const double bw = std::min(w * 0.8, 0.08), bh = rh * 0.5;
        const QPointF ctr(nb.left() + w * (static_cast<double>(i) + 0.5), nb.top() + rh * (row + 0.5));
        it.box = QRectF(ctr.x() - bw / 2, ctr.y() - bh / 2, bw, bh);
        const std::string& name = p.name;
        const auto dot = name.find('.');
        it.label = QString::fromStdString(dot == std::string::npos ? name : name.substr(dot + 1));
        it.tip = QString::fromStdString(name + " (" + std::string(to_string(p.kind)) + ")");
        it.color = vertex_color(p.kind);
        pos[static_cast<std::size_t>(verts[i])] = ctr;
        item_of[static_cast<std::size_t>(verts[i])] = static_cast<int>(items_.size());
        items_.push_back(it);
      }
    }
  }
  // Fabric tiers.
  int t = 0;
  const double tier_h = (kFabric - kTop - 0.04) / std::max<std::size_t>(1, tiers.size());
  for (const auto& [tier, verts] : tiers) {
    // One box per switch, or per `group` consecutive switches of the tier on large fabrics.
    const int n = static_cast<int>(verts.size()), group = per_box(n, kMaxTierBoxes);
    const int tier_boxes = (n + group - 1) / group;
    const double w = (1.0 - 2 * kMargin) / static_cast<double>(tier_boxes);
    for (int i = 0; i < tier_boxes; ++i) {
      const int first = i * group, last = std::min(n, first + group) - 1;
      const VertexProps& p = c.vertex(static_cast<VertexId>(verts[static_cast<std::size_t>(first)]));
      const QPointF ctr(kMargin + w * (static_cast<double>(i) + 0.5), kTop + tier_h * (t + 0.5));
      Item it;
      const double bw = std::min(w * 0.8, 0.08), bh = tier_h * 0.45;
      it.box = QRectF(ctr.x() - bw / 2, ctr.y() - bh / 2, bw, bh);
      if (group == 1) {
        it.label = QString::fromStdString(p.name);
        it.tip = QString::fromStdString(p.name + " (fabric switch, tier " + std::to_string(p.tier) + ")");
      } else {
        const std::string& last_name = c.vertex(static_cast<VertexId>(verts[static_cast<std::size_t>(last)])).name;
        it.label = QString("%1 sw").arg(last - first + 1);
        it.tip = QString("%1 fabric switches of tier %2: %3 ... %4")
                     .arg(last - first + 1)
                     .arg(p.tier)
                     .arg(QString::fromStdString(p.name))
                     .arg(QString::fromStdString(last_name));
      }
      it.color = vertex_color(p.kind);
      const int idx = static_cast<int>(items_.size());
      for (int j = first; j <= last; ++j) {
        pos[static_cast<std::size_t>(verts[static_cast<std::size_t>(j)])] = ctr;
        item_of[static_cast<std::size_t>(verts[static_cast<std::size_t>(j)])] = idx;
      }
      items_.push_back(it);
    }
    ++t;
  }
  // Links: each physical link once; collapsed mode aggregates per (item, item, kind) and skips
  // links inside one node.
  std::map<std::tuple<int, int, int>, std::pair<double, int>> agg;  // -> (bandwidth sum, count)
  std::map<std::pair<int, double>, int> kinds;                       // (kind, GB/s) -> links
  for (int l = 0; l < c.num_links(); ++l) {
    const Link& link = c.link(l);
    if (link.reverse >= 0 && link.reverse < l) continue;
    kinds[{static_cast<int>(link.kind), link.bandwidth.value / 1e9}] += 1;
    const int a = item_of[link.src], b = item_of[link.dst];
    if (collapsed_) {
      if (a == b) continue;
      auto& e = agg[{std::min(a, b), std::max(a, b), static_cast<int>(link.kind)}];
      e.first += link.bandwidth.value;
      e.second += 1;
      continue;
    }
    Wire w;
    w.line = QLineF(pos[link.src], pos[link.dst]);
    w.color = link_color(link.kind);
    w.width = link.kind == LinkKind::nvlink ? 2.0 : 1.2;
    w.tip = QString("%1 <-> %2\n%3, %4 per direction (%5 lane(s)), latency %6 us")
                .arg(QString::fromStdString(c.vertex(link.src).name))
                .arg(QString::fromStdString(c.vertex(link.dst).name))
                .arg(QString::fromStdString(std::string(to_string(link.kind))))
                .arg(gbps(link.bandwidth))
                .arg(link.lanes)
                .arg(link.latency.value * 1e6, 0, 'f', 2);
    wires_.push_back(w);
  }
  for (const auto& [key, e] : agg) {
    const auto [a, b, kind] = key;
    Wire w;
    const QRectF ra = items_[static_cast<std::size_t>(a)].box, rb = items_[static_cast<std::size_t>(b)].box;
    w.line = QLineF(QPointF(ra.center().x(), ra.top() < rb.top() ? ra.bottom() : ra.top()),
                    QPointF(rb.center().x(), rb.top() < ra.top() ? rb.bottom() : rb.top()));
    w.color = link_color(static_cast<LinkKind>(kind));
    w.width = 1.0;
    w.tip = QString("%1 <-> %2: %3 %4 link(s), %5 per direction in total")
                .arg(items_[static_cast<std::size_t>(a)].label)
                .arg(items_[static_cast<std::size_t>(b)].label)
                .arg(e.second)
                .arg(QString::fromStdString(std::string(to_string(static_cast<LinkKind>(kind)))))
                .arg(gbps(BytesPerSecond(e.first)));
    wires_.push_back(w);
  }
  for (const auto& [key, count] : kinds) {
    legend_ << QString("%1 %2 GB/s (%3)")
                   .arg(QString::fromStdString(std::string(to_string(static_cast<LinkKind>(key.first)))))
                   .arg(key.second, 0, 'f', 1)
                   .arg(count);
  }
  update();
}

QRectF ClusterView::to_widget(const QRectF& r) const {
  return QRectF(r.x() * width(), r.y() * height(), r.width() * width(), r.height() * height());
}
QPointF ClusterView::to_widget(QPointF p) const { return QPointF(p.x() * width(), p.y() * height()); }

void ClusterView::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.setRenderHint(QPainter::Antialiasing);
  p.fillRect(rect(), Qt::white);
  p.setPen(Qt::black);
  p.drawText(QRectF(6, 2, width() - 12, 18), Qt::AlignLeft | Qt::AlignVCenter, title_);
  // Legend: one swatch per (kind, bandwidth).
  double x = 6;
  for (const QString& l : legend_) {
    const QString kind = l.section(' ', 0, 0);
    LinkKind k = LinkKind::pcie;
    for (LinkKind cand : {LinkKind::nvlink, LinkKind::pcie, LinkKind::upi, LinkKind::ib, LinkKind::roce, LinkKind::ethernet,
                          LinkKind::memory}) {
      if (kind == QString::fromStdString(std::string(to_string(cand)))) k = cand;
    }
    p.fillRect(QRectF(x, 26, 14, 10), link_color(k));
    const double tw = p.fontMetrics().horizontalAdvance(l) + 28;
    p.drawText(QPointF(x + 18, 36), l);
    x += tw;
  }
  // Node boxes first, wires, then devices on top.
  for (const Item& it : items_) {
    if (!it.node) continue;
    const QRectF r = to_widget(it.box);
    p.setPen(QColor(160, 160, 160));
    p.setBrush(it.color);
    p.drawRoundedRect(r, 6, 6);
    p.setPen(Qt::black);
    p.drawText(r.adjusted(4, 2, -2, -2), Qt::AlignLeft | (collapsed_ ? Qt::AlignVCenter : Qt::AlignBottom), it.label);
  }
  for (const Wire& w : wires_) {
    QPen pen(w.color);
    pen.setWidthF(w.width);
    p.setPen(pen);
    p.drawLine(QLineF(to_widget(w.line.p1()), to_widget(w.line.p2())));
  }
  for (const Item& it : items_) {
    if (it.node) continue;
    const QRectF r = to_widget(it.box);
    p.setPen(Qt::black);
    p.setBrush(it.color);
    p.drawRect(r);
    if (p.fontMetrics().horizontalAdvance(it.label) < r.width() + 4) p.drawText(r, Qt::AlignCenter, it.label);
  }
}

QString ClusterView::tooltip_at(QPointF pos) const {
  const QPointF n(pos.x() / std::max(1, width()), pos.y() / std::max(1, height()));
  // Devices first (smallest boxes), then wires within 4 px, then node boxes.
  for (const Item& it : items_) {
    if (!it.node && it.box.contains(n)) return it.tip;
  }
  for (const Wire& w : wires_) {
    const QLineF l(to_widget(w.line.p1()), to_widget(w.line.p2()));
    const QPointF d = l.p2() - l.p1();
    const double len2 = QPointF::dotProduct(d, d);
    if (len2 <= 0) continue;
    const double t = std::clamp(QPointF::dotProduct(pos - l.p1(), d) / len2, 0.0, 1.0);
    const QPointF q = l.p1() + t * d - pos;
    if (QPointF::dotProduct(q, q) <= 16.0) return w.tip;
  }
  for (const Item& it : items_) {
    if (it.box.contains(n)) return it.tip;
  }
  return {};
}

bool ClusterView::event(QEvent* e) {
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
