// Built-in data files found by name (`--cluster hgx-h200-8`, `--calibration h200x4`): where they
// are looked up, and the machine-independent label a loaded file carries into outputs and
// provenance.
//
// Lookup order for a name N under a folder S (e.g. "calibrate/profiles"):
// $SCALESCOPE_DATA_DIR/S/N.json, then <source tree>/S/N.json. The label is "S/N.json" whichever
// folder held it, so the same inputs give the same outputs on any machine and checkout (an absolute
// path would leak into golden files and traces).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace scalescope {

/// True when `s` names a file rather than a built-in: it has a '/', ends in ".json" or exists.
bool looks_like_path(std::string_view s);

/// The folders searched for built-in files under `subdir`, in lookup order.
std::vector<std::filesystem::path> data_dirs(std::string_view subdir);

/// Names (file stems) of the .json files in those folders, sorted, without duplicates.
std::vector<std::string> available_data_names(std::string_view subdir);

struct NamedDataFile {
  std::filesystem::path path;  ///< where it was found (to open)
  std::string label;           ///< "subdir/name.json" (to report)
};

/// The built-in file `name`.json under `subdir`, or nullopt when no folder has it.
std::optional<NamedDataFile> find_data_file(std::string_view subdir, std::string_view name);

}  // namespace scalescope
