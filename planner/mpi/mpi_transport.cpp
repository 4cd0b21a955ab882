// The MPI transport of the work split (work_split.hpp) as a plugin: byte messages over MPI_COMM_WORLD.
// Loaded at run time by load_mpi_transport(), so the core programs link no MPI library.
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "scalescope/planner/work_split.hpp"

namespace {

constexpr int kTag = 23;

class MpiTransport final : public scalescope::planner::Transport {
 public:
  MpiTransport() {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  ~MpiTransport() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Finalize();
  }
  MpiTransport(const MpiTransport&) = delete;
  MpiTransport& operator=(const MpiTransport&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  void send(int to, const std::string& bytes) override {
    MPI_Send(bytes.data(), static_cast<int>(bytes.size()), MPI_CHAR, to, kTag, MPI_COMM_WORLD);
  }

  std::optional<scalescope::planner::TransportMessage> try_receive() override {
    int flag = 0;
    MPI_Status st;
    MPI_Iprobe(MPI_ANY_SOURCE, kTag, MPI_COMM_WORLD, &flag, &st);
    if (!flag) return std::nullopt;
    return take(st);
  }

  scalescope::planner::TransportMessage receive() override {
    // Probe and sleep instead of a blocking receive: Open MPI's blocking calls spin a core, which an idle
    // rank would take from the ranks that compute (several ranks per core with --oversubscribe).
    for (;;) {
      if (auto m = try_receive()) return std::move(*m);
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }

 private:
  scalescope::planner::TransportMessage take(MPI_Status& st) {
    int count = 0;
    MPI_Get_count(&st, MPI_CHAR, &count);
    scalescope::planner::TransportMessage m;
    m.from = st.MPI_SOURCE;
    m.bytes.resize(static_cast<std::size_t>(count));
    MPI_Recv(m.bytes.data(), count, MPI_CHAR, st.MPI_SOURCE, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return m;
  }

  int rank_ = 0;
  int size_ = 1;
};

}  // namespace

extern "C" __attribute__((visibility("default"))) scalescope::planner::Transport* scalescope_mpi_transport_open(
    char* error, std::size_t error_size) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int provided = 0;
    if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
      std::snprintf(error, error_size, "MPI_Init_thread failed");
      return nullptr;
    }
    if (provided < MPI_THREAD_FUNNELED) {
      std::snprintf(error, error_size, "the MPI library provides no MPI_THREAD_FUNNELED");
      MPI_Finalize();
      return nullptr;
    }
  }
  return new MpiTransport();
}
