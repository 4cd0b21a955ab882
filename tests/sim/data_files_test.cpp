// Tests for built-in data files found by name (sim/data_files.hpp): the label a file carries is
// "folder/name.json" wherever it was found, $SCALESCOPE_DATA_DIR comes first, and unknown names
// are not found.
#include "scalescope/sim/data_files.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "scalescope/sim/cluster.hpp"

namespace scalescope {
namespace {

namespace fs = std::filesystem;

/// Sets $SCALESCOPE_DATA_DIR for the test's lifetime (restoring what was there).
class DataDirOverride {
 public:
  explicit DataDirOverride(const fs::path& dir) {
    if (const char* old = std::getenv("SCALESCOPE_DATA_DIR")) old_ = old;
    ::setenv("SCALESCOPE_DATA_DIR", dir.c_str(), 1);
  }
  ~DataDirOverride() {
    if (old_)
      ::setenv("SCALESCOPE_DATA_DIR", old_->c_str(), 1);
    else
      ::unsetenv("SCALESCOPE_DATA_DIR");
  }

 private:
  std::optional<std::string> old_;
};

TEST(DataFiles, ABuiltInFileIsLabelledRelativeToItsFolder) {
  const auto f = find_data_file("topologies", "hgx-h200-8");
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->label, "topologies/hgx-h200-8.json");
  EXPECT_TRUE(fs::is_regular_file(f->path));
  EXPECT_TRUE(f->path.is_absolute());  // the source tree's copy: found from any working directory
}

TEST(DataFiles, TheDataDirOverrideComesFirstAndKeepsTheSameLabel) {
  const fs::path dir = fs::temp_directory_path() / "scalescope_data_files_test";
  fs::create_directories(dir / "calibrate" / "profiles");
  std::ofstream(dir / "calibrate" / "profiles" / "only-here.json") << "{}\n";
  DataDirOverride env(dir);
  const auto f = find_data_file("calibrate/profiles", "only-here");
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->path, dir / "calibrate" / "profiles" / "only-here.json");
  EXPECT_EQ(f->label, "calibrate/profiles/only-here.json");
  const auto names = available_data_names("calibrate/profiles");
  EXPECT_NE(std::find(names.begin(), names.end(), "only-here"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "h200x4"),
            names.end());  // the source tree's still listed
  fs::remove_all(dir);
}

TEST(DataFiles, UnknownNamesAreNotFoundAndPathsAreNotNames) {
  EXPECT_FALSE(find_data_file("topologies", "no-such-cluster").has_value());
  EXPECT_TRUE(looks_like_path("topologies/hgx-h200-8.json"));
  EXPECT_TRUE(looks_like_path("mine.json"));
  EXPECT_FALSE(looks_like_path("hgx-h200-8"));
}

TEST(DataFiles, AClusterLoadedByNameNamesItsFileByLabelInErrors) {
  // --nodes 0 is rejected by the loader with the cluster file as the error's file: the label, not
  // the checkout's absolute path.
  ClusterOptions o;
  o.nodes = 0;
  const auto c = load_cluster_by_name_or_path("hgx-h200-8", o);
  ASSERT_FALSE(c.has_value());
  EXPECT_EQ(c.error().file, "topologies/hgx-h200-8.json");
}

}  // namespace
}  // namespace scalescope
