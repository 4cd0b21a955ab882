// The built-in stack profiles, embedded at build time from models/stacks/*.json (models/embed_stacks.cmake).
#pragma once

#include <span>
#include <string_view>

namespace scalescope::models::detail {

struct BuiltinStack {
  std::string_view name;  ///< the file's stem, e.g. "fused"
  std::string_view json;  ///< the file's text
};

std::span<const BuiltinStack> builtin_stacks();

}  // namespace scalescope::models::detail
