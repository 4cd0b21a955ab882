// Shared by the collective-fit tests: the lent 4x H200 box's topology and profiles whose rows are
// a collective model's own times (times a factor), 8 B .. 1 GiB in steps of 2.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "scalescope/calibrate/fit.hpp"

namespace scalescope::calib::testing {

inline Cluster h200x4() {
  auto c = load_cluster(std::string(SCALESCOPE_SOURCE_DIR) + "/topologies/hgx-h200-4.json");
  EXPECT_TRUE(c) << (c ? "" : c.error().str());
  return std::move(c).value();
}

/// One entry per (op, group size), ops outermost, ranks 0..n-1; each row's time is `model`'s
/// analytical time x factor(op, n, bytes), called in row order.
inline Profile model_rows(const CollectiveModel& model, const std::vector<CollOp>& ops, const std::vector<int>& groups,
                          const std::function<double(CollOp, int, double)>& factor) {
  Profile p;
  p.file = "synthetic.json";
  for (CollOp op : ops) {
    for (int n : groups) {
      CollEntry e;
      e.op = std::string(to_string(op));
      e.nranks = n;
      for (int i = 0; i < n; ++i) e.ranks.push_back(i);
      for (double s = 8; s <= 1024.0 * 1024 * 1024; s *= 2) {
        CollRow r;
        r.bytes = s;
        r.time_us = model.analytical(op, e.ranks, Bytes(s)).time.value * 1e6 * factor(op, n, s);
        e.rows.push_back(r);
      }
      p.collectives.push_back(std::move(e));
    }
  }
  return p;
}

}  // namespace scalescope::calib::testing
