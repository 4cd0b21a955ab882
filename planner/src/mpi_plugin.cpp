// Finding and loading the optional MPI transport (libscalescope_mpi.so) at run time, so that the core
// programs link no MPI library: `mpirun -np N scalescope sweep ...` works when the plugin was built.
#include <dlfcn.h>
#include <unistd.h>

#include <array>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "scalescope/planner/work_split.hpp"

namespace scalescope::planner {

namespace {

constexpr const char* kPlugin = "libscalescope_mpi.so";
/// The plugin's one entry point (planner/mpi/mpi_transport.cpp): a Transport over MPI_COMM_WORLD, or null
/// with a message in `error`.
using OpenFn = Transport* (*)(char* error, std::size_t error_size);

std::filesystem::path program_dir() {
  std::array<char, 4096> buf{};
  const ssize_t n = ::readlink("/proc/self/exe", buf.data(), buf.size() - 1);
  if (n <= 0) return {};
  return std::filesystem::path(std::string(buf.data(), static_cast<std::size_t>(n))).parent_path();
}

}  // namespace

Expected<std::shared_ptr<Transport>> load_mpi_transport() {
  std::vector<std::filesystem::path> candidates;
  if (const char* env = std::getenv("SCALESCOPE_MPI_PLUGIN"); env != nullptr && *env != '\0') {
    candidates.emplace_back(env);
  } else {
    const auto dir = program_dir();
    candidates.push_back(dir / kPlugin);
    candidates.push_back(dir / ".." / "lib" / "scalescope" / kPlugin);
  }
  std::string tried;
  for (const auto& path : candidates) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) {
      tried += (tried.empty() ? "" : ", ") + path.string();
      continue;
    }
    // RTLD_GLOBAL: MPI's own components (dlopened by libmpi) resolve libmpi's symbols through it.
    void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (handle == nullptr) return runtime_error(std::string("cannot load the MPI transport: ") + ::dlerror());
    auto open = reinterpret_cast<OpenFn>(::dlsym(handle, "scalescope_mpi_transport_open"));
    if (open == nullptr) return runtime_error(path.string() + ": no scalescope_mpi_transport_open");
    std::array<char, 512> err{};
    Transport* t = open(err.data(), err.size());
    if (t == nullptr) return runtime_error(std::string("MPI did not start: ") + err.data());
    return std::shared_ptr<Transport>(t);  // the plugin stays loaded: MPI_Finalize runs in its destructor
  }
  return runtime_error("running under an MPI launcher, but this build has no MPI transport (" + std::string(kPlugin) +
                       " not found: " + tried + "); install Open MPI (libopenmpi-dev) and rebuild, or set "
                       "SCALESCOPE_MPI_PLUGIN");
}

}  // namespace scalescope::planner
