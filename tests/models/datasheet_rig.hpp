// A cluster with the collective model and the compute model of its GPU's datasheet (nothing measured), for model
// tests that build and simulate task graphs.
#pragma once

#include <utility>

#include "scalescope/models/compute_model.hpp"
#include "scalescope/sim/cluster.hpp"
#include "scalescope/sim/collective.hpp"

namespace scalescope::models::testing {

struct DatasheetRig {
  Cluster cluster;
  CollectiveModel coll;  ///< refers to `cluster`: a rig is neither copied nor moved
  ComputeModel compute;
  explicit DatasheetRig(Cluster c)
      : cluster(std::move(c)), coll(cluster, datasheet_collective_params()),
        compute(ComputeModel::datasheet(cluster.gpu_spec()).value()) {}
};

}  // namespace scalescope::models::testing
