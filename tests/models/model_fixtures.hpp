// Models and plans for model tests: a catalog entry and a plan string, loaded or the test fails with the error.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "scalescope/models/model_spec.hpp"
#include "scalescope/models/plan.hpp"

namespace scalescope::models::testing {

/// The catalog entry `name` (an empty spec, and a failed expectation, when it does not load).
inline ModelSpec catalog(const std::string& name) {
  auto m = load_model_by_name_or_path(name);
  EXPECT_TRUE(m.has_value()) << (m ? "" : m.error().str());
  return m ? *m : ModelSpec{};
}

/// The plan `text` ("tp=2,dp=4,..."); a failed assertion when it does not parse.
inline Plan plan(const std::string& text) {
  auto p = parse_plan(text);
  EXPECT_TRUE(p.has_value()) << (p ? "" : p.error().str());
  return p ? *p : Plan{};
}

}  // namespace scalescope::models::testing
