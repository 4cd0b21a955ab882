// Tests for composing calibration profiles (issue 26): each part from where it was measured, what was not measured
// named, and a profile of another GPU type than the cluster's flagged (an error with strict).
#include "scalescope/calibrate/hardware.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

namespace scalescope::calib {
namespace {

Cluster cluster(const std::string& name) { return load_cluster_by_name_or_path(name).value(); }

bool any_note(const HardwareModels& hw, const std::string& what) {
  return std::any_of(hw.notes.begin(), hw.notes.end(), [&](const std::string& n) { return n.find(what) != std::string::npos; });
}

TEST(Hardware, AOneGpuProfileWorksAndNamesWhatItDidNotMeasure) {
  // h100-gpu.json was measured on one H100 (no collective rows): the GPU is priced from it, the collectives from the
  // cluster's datasheet link model, and a note says so.
  auto hw = load_hardware_models("h100-gpu", cluster("dgx-h100-8"));
  ASSERT_TRUE(hw.has_value()) << hw.error().str();
  EXPECT_NE(hw->compute_source.find("h100-gpu.json"), std::string::npos) << hw->compute_source;
  EXPECT_EQ(hw->collective_source, "built-in datasheet parameters");
  EXPECT_TRUE(any_note(*hw, "collectives and P2P")) << hw->gpu_note;
  EXPECT_FALSE(any_note(*hw, "was measured on")) << hw->gpu_note;  // an H100 profile for an H100 cluster
}

TEST(Hardware, ProfilesComposePartByPart) {
  // h100-gpu first: its GEMM, memory and attention price the GPU; h200x4 adds what h100-gpu did not measure (the
  // collectives of 4 H200 and the interference rows) and is flagged as another GPU type's.
  auto hw = load_hardware_models("h100-gpu,h200x4", cluster("dgx-h100-8"));
  ASSERT_TRUE(hw.has_value()) << hw.error().str();
  EXPECT_NE(hw->compute_source.find("h100-gpu.json"), std::string::npos) << hw->compute_source;
  EXPECT_NE(hw->collective_source.find("h200x4"), std::string::npos) << hw->collective_source;
  EXPECT_TRUE(any_note(*hw, "was measured on 'NVIDIA H200', the cluster's GPU is 'H100 SXM5 80GB'")) << hw->gpu_note;
  EXPECT_FALSE(any_note(*hw, "collectives and P2P")) << hw->gpu_note;
}

TEST(Hardware, AnotherGpuTypesProfileIsAnErrorWithStrict) {
  CalibrationOptions strict;
  strict.strict = true;
  auto hw = load_hardware_models("h200-gpu", cluster("dgx-h100-8"), strict);
  ASSERT_FALSE(hw.has_value());
  EXPECT_NE(hw.error().str().find("$.gpus[0].name"), std::string::npos) << hw.error().str();
  EXPECT_NE(hw.error().str().find("'NVIDIA H200'"), std::string::npos) << hw.error().str();
  EXPECT_NE(hw.error().str().find("'H100 SXM5 80GB'"), std::string::npos) << hw.error().str();
  // Without strict the same profile is used, with the note.
  auto lax = load_hardware_models("h200-gpu", cluster("dgx-h100-8"));
  ASSERT_TRUE(lax.has_value()) << lax.error().str();
  EXPECT_TRUE(any_note(*lax, "was measured on 'NVIDIA H200'")) << lax->gpu_note;
}

TEST(Hardware, NoCalibrationTakesTheShippedProfileOfTheClustersGpu) {
  // calibrate/gpu-defaults.json maps the H100 SXM to h100-gpu; "none" keeps the datasheet.
  auto def = load_hardware_models("", cluster("dgx-h100-8"));
  ASSERT_TRUE(def.has_value()) << def.error().str();
  EXPECT_NE(def->compute_source.find("h100-gpu.json"), std::string::npos) << def->compute_source;
  EXPECT_TRUE(any_note(*def, "no --calibration")) << def->gpu_note;
  auto none = load_hardware_models("none", cluster("dgx-h100-8"));
  ASSERT_TRUE(none.has_value()) << none.error().str();
  EXPECT_EQ(none->compute_source, "datasheet roofline");
}

}  // namespace
}  // namespace scalescope::calib
