// --plan-from-megatron for `simulate` and `plan`: the world size from --gpus / --nodes when the flags do
// not give it, and the ignored flags and approximations reported on stderr.
#pragma once

#include <optional>
#include <string>

#include "scalescope/models/megatron_flags.hpp"

namespace scalescope::cli {

/// models::plan_from_megatron with the world size of `gpus`, else `nodes` whole nodes of `cluster`.
Expected<models::Plan> plan_from_megatron_flags(const std::string& command, const std::string& flags,
                                                const models::ModelSpec& model, const std::string& cluster,
                                                std::optional<int> gpus, std::optional<int> nodes);

}  // namespace scalescope::cli
