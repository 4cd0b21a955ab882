// Fuzz target: nvidia-smi text (topo -m, nvlink -s, CSV queries) as the GPU program's topology import reads it.
#include "fuzz_common.hpp"
#include "scalescope/calibrate/smi_text.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace scalescope;
  const std::string_view text = fuzz::text_of(data, size);
  if (auto m = smi_text::parse_topo_matrix(smi_text::strip_ansi(text))) {
    for (const auto& r : m->rows)
      for (const auto& c : m->columns) (void)m->link(r, c);
  }
  (void)smi_text::parse_nvlink_status(text);
  (void)smi_text::split_csv_line(text);
  (void)smi_text::normalize_pci_bus_id(text);
  return 0;
}
