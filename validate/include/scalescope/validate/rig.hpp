// A cluster with its collective model and compute model: what one validation row is predicted on.
#pragma once

#include <utility>

#include "scalescope/models/compute_model.hpp"
#include "scalescope/sim/cluster.hpp"
#include "scalescope/sim/collective.hpp"

namespace scalescope::validate {

struct Rig {
  Cluster cluster;
  CollectiveModel coll;
  models::ComputeModel compute;
  Rig(Cluster c, CollectiveParams p, models::ComputeModel m)
      : cluster(std::move(c)), coll(cluster, std::move(p)), compute(std::move(m)) {}
};

}  // namespace scalescope::validate
