// Where a plan's transformer layers sit on its pipeline stages: even (the default), uneven first / last
// stages (Megatron --decoder-first/last-pipeline-num-layers), or an explicit Megatron
// --pipeline-model-parallel-layout string; and the nearest valid settings when a plan does not divide.
//
// Rules (Megatron-Core TransformerConfig.__post_init__, 2026):
//   even:    pp * vpp divides layers.
//   uneven:  first_stage_layers F and last_stage_layers L (either may be 0 = not set) are > 0 when set
//            and divisible by vpp; the m middle stages (pp minus the set ends) share layers - F - L:
//            middle layers > 0 exactly when m > 0, m divides them, and vpp divides each stage's share.
//            A stage's layers are split evenly over its vpp chunks.
//   layout:  pp * vpp entries separated by '|' (virtual stage v runs on stage v % pp), each a string
//            of 't' (transformer layer), 'E' (embedding, only at the start of the first entry) and 'L'
//            (loss, only at the end of the last entry); "x*n" repeats a character, "(...)*n" a group
//            (no nesting needed by Megatron's examples; nested groups are unrolled innermost first);
//            commas are cosmetic; the 't' count must equal the model's layers.
// Suggestions for a plan whose pp does not divide the layers: the (F, L) pairs that satisfy the uneven
// rules, nearest to the even share layers / pp first (largest |F - layers/pp| and |L - layers/pp|,
// then F + L), and the nearest pp above and below that divides layers (with vpp).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "scalescope/models/counts.hpp"
#include "scalescope/models/model_spec.hpp"
#include "scalescope/models/plan.hpp"

namespace scalescope::models {

/// Layers per virtual stage from a Megatron layout string (errors: file "plan", path "pp_layout").
Expected<std::vector<int>> parse_pp_layout(std::string_view layout);

/// The layout of `plan` (even, uneven or pp_layout); errors name the plan key and the rule broken, and
/// an even plan that does not divide lists the nearest valid settings.
Expected<PipelineLayout> plan_layout(const ModelSpec& spec, const Plan& plan);

/// plan_layout(), or even_layout() for a plan whose layout is invalid (callers that validated the plan).
PipelineLayout layout_of(const ModelSpec& spec, const Plan& plan);

/// Up to `count` (first_stage_layers, last_stage_layers) pairs valid for `layers` on pp stages of vpp
/// chunks, nearest to the even share first (see the header comment).
std::vector<std::pair<int, int>> nearest_uneven_splits(int layers, int pp, int vpp, int count = 2);

}  // namespace scalescope::models
