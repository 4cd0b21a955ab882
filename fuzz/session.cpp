// Fuzz target: GUI session files (scalescope.gui_session/1) -> session_from_json (scalescope_gui_core: no Qt).
#include "fuzz_common.hpp"
#include "scalescope/gui/workbench.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace scalescope;
  return fuzz::on_json(data, size, [&](const Json& j) {
    fuzz::check(gui::session_from_json(j, "fuzz-session.json"),
                [](const gui::Session& s) { (void)dump_json(gui::session_to_json(s)); });
  });
}
