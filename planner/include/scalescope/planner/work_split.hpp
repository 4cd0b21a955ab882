// Dynamic load balancing of independent work items over local threads and, through a Transport, over the
// ranks of an MPI job. Rank 0 coordinates and computes; every other rank asks for an item, computes it and
// sends the result back with its next request ("self-scheduling"), so fast and slow items even out.
// Results reach rank 0 in completion order; callers order them by item (deterministic output).
//
// Messages (bytes): worker -> 0: "R" (ready, first request) or "D<item>\n<result>" (done + next request);
// 0 -> worker: "W<item>" (compute it) or "S" (stop). The transport only moves bytes (MPI: planner/mpi/).
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "scalescope/sim/error.hpp"

namespace scalescope::planner {

/// A message and the rank it came from.
struct TransportMessage {
  int from = 0;
  std::string bytes;
};

/// Point-to-point byte messages between the ranks of one job. Rank 0 calls send/try_receive/receive from
/// one thread only (MPI_THREAD_FUNNELED); other ranks call send/receive.
class Transport {
 public:
  virtual ~Transport() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual void send(int to, const std::string& bytes) = 0;
  /// A message from any rank, if one has arrived.
  virtual std::optional<TransportMessage> try_receive() = 0;
  /// Waits for the next message from any rank (without spinning a core).
  virtual TransportMessage receive() = 0;
};

/// Computes one item; returns its result as bytes. Must be safe to call from several threads at once.
using WorkFn = std::function<std::string(std::size_t item)>;
/// Receives one result on rank 0, on the calling thread, one at a time.
using DeliverFn = std::function<void(std::size_t item, std::string result)>;

/// Rank 0's side: rounds of items computed by `threads` local threads and the other ranks of `transport`
/// (null: local threads only). Other ranks must be inside serve() until finish().
class WorkSplitter {
 public:
  WorkSplitter(Transport* transport, int threads);
  /// One round: computes `items` and delivers every result before returning.
  void run(const std::vector<std::size_t>& items, const WorkFn& work, const DeliverFn& deliver);
  /// Tells every other rank to leave serve() (after its first request has arrived).
  void finish();

 private:
  Transport* transport_;
  int threads_;
  std::vector<int> idle_;    ///< ranks waiting for an item
  std::vector<bool> heard_;  ///< ranks whose first request has arrived
};

/// Ranks other than 0: computes the items rank 0 hands out until it says stop.
void serve(const WorkFn& work, Transport& transport);

/// Whether this process was started by an MPI launcher (mpirun/mpiexec of Open MPI, MPICH's PMI, srun
/// --mpi=pmix): OMPI_COMM_WORLD_SIZE, PMIX_RANK, PMI_SIZE or PMI_RANK in the environment.
bool launched_by_mpi();

/// Loads the MPI transport (libscalescope_mpi.so, built when MPI is found) and initialises MPI. Looked for
/// in $SCALESCOPE_MPI_PLUGIN, next to the running program, and in ../lib/scalescope/. A runtime error
/// says why when it is missing (this build has no MPI support) or MPI fails to start.
Expected<std::shared_ptr<Transport>> load_mpi_transport();

}  // namespace scalescope::planner
