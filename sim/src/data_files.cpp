#include "scalescope/sim/data_files.hpp"

#include <cstdlib>
#include <set>

namespace scalescope {

namespace fs = std::filesystem;

bool looks_like_path(std::string_view s) {
  std::error_code ec;
  return s.find('/') != std::string_view::npos || (s.size() > 5 && s.ends_with(".json")) ||
         fs::is_regular_file(fs::path(s), ec);
}

std::vector<fs::path> data_dirs(std::string_view subdir) {
  std::vector<fs::path> dirs;
  if (const char* env = std::getenv("SCALESCOPE_DATA_DIR"); env && *env)
    dirs.push_back(fs::path(env) / subdir);
#ifdef SCALESCOPE_SOURCE_DIR
  dirs.push_back(fs::path(SCALESCOPE_SOURCE_DIR) / subdir);
#endif
  return dirs;
}

std::vector<std::string> available_data_names(std::string_view subdir) {
  std::set<std::string> names;
  for (const auto& dir : data_dirs(subdir)) {
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
      if (it->is_regular_file(ec) && it->path().extension() == ".json")
        names.insert(it->path().stem().string());
  }
  return {names.begin(), names.end()};
}

std::optional<NamedDataFile> find_data_file(std::string_view subdir, std::string_view name) {
  const std::string file = std::string(name) + ".json";
  for (const auto& dir : data_dirs(subdir)) {
    std::error_code ec;
    const fs::path p = dir / file;
    if (fs::is_regular_file(p, ec))
      return NamedDataFile{p, (fs::path(subdir) / file).generic_string()};
  }
  return std::nullopt;
}

}  // namespace scalescope
