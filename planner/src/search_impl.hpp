// Internals of the plan search shared by its source files.
#pragma once

#include <string>
#include <vector>

#include "scalescope/planner/search.hpp"

namespace scalescope::planner {

/// Why a search ranked nothing, one sentence per cause, each saying what to change.
std::vector<std::string> explain_no_plan(const models::ModelSpec& model, const SearchSpace& space, int gpus_per_node,
                                         Bytes capacity, const Enumeration& e, const PruneCounts& c);

}  // namespace scalescope::planner
