// Internal: the efficiency-by-size curves of CollectiveParams in JSON (written and read).
#pragma once

#include <string>

#include "scalescope/sim/collective_params.hpp"

namespace scalescope::collparams {

/// {"source": ..., "<op>": {"log2_bytes": [...], "factor": [...]}, ..., "sendrecv_distinct_peers": {...}}
/// with the ops that have knots; nullopt-like empty object when no curve has knots.
Json size_efficiency_to_json(const CollectiveParams& p);

/// Reads the group above into `p` (curves absent stay as they are); throws ErrorException.
void read_size_efficiency(const JsonCursor& group, CollectiveParams& p);

}  // namespace scalescope::collparams
