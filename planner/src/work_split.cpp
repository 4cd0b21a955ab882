// Self-scheduling work split over local threads and the ranks of a Transport (see work_split.hpp).
#include "scalescope/planner/work_split.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>

namespace scalescope::planner {

WorkSplitter::WorkSplitter(Transport* transport, int threads)
    : transport_(transport && transport->size() > 1 ? transport : nullptr), threads_(std::max(1, threads)) {
  if (transport_) heard_.assign(static_cast<std::size_t>(transport_->size()), false);
}

void WorkSplitter::run(const std::vector<std::size_t>& items, const WorkFn& work, const DeliverFn& deliver) {
  std::mutex m;
  std::condition_variable cv;
  std::size_t next = 0;
  std::deque<std::pair<std::size_t, std::string>> done;
  auto take = [&]() -> std::optional<std::size_t> {  // under m
    if (next == items.size()) return std::nullopt;
    return items[next++];
  };
  auto local = [&] {
    for (;;) {
      std::optional<std::size_t> item;
      {
        std::lock_guard lock(m);
        item = take();
      }
      if (!item) return;
      std::string r = work(*item);
      std::lock_guard lock(m);
      done.emplace_back(*item, std::move(r));
      cv.notify_one();
    }
  };
  auto give = [&](int rank) {  // the next item to a waiting rank, or keep it idle
    std::optional<std::size_t> item;
    {
      std::lock_guard lock(m);
      item = take();
    }
    if (item) transport_->send(rank, "W" + std::to_string(*item));
    else idle_.push_back(rank);
  };
  // Ranks idle since an earlier round get items first.
  if (transport_) {
    std::vector<int> waiting;
    waiting.swap(idle_);
    for (int r : waiting) give(r);
  }
  const int threads = std::min<int>(threads_, static_cast<int>(std::max<std::size_t>(items.size(), 1)));
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back(local);
  std::size_t outstanding = items.size();
  std::deque<std::pair<std::size_t, std::string>> ready;
  while (outstanding > 0) {
    bool progressed = false;
    {
      std::lock_guard lock(m);
      ready.swap(done);
    }
    for (auto& [item, r] : ready) {
      deliver(item, std::move(r));
      --outstanding;
      progressed = true;
    }
    ready.clear();
    while (transport_) {
      auto msg = transport_->try_receive();
      if (!msg) break;
      progressed = true;
      heard_[static_cast<std::size_t>(msg->from)] = true;
      if (!msg->bytes.empty() && msg->bytes[0] == 'D') {
        const std::size_t nl = msg->bytes.find('\n');
        const std::size_t item = std::strtoull(msg->bytes.c_str() + 1, nullptr, 10);
        deliver(item, nl == std::string::npos ? std::string() : msg->bytes.substr(nl + 1));
        --outstanding;
      }
      give(msg->from);
    }
    if (!progressed && outstanding > 0) {
      std::unique_lock lock(m);
      cv.wait_for(lock, std::chrono::microseconds(transport_ ? 200 : 100000), [&] { return !done.empty(); });
    }
  }
  for (auto& t : pool) t.join();
}

void WorkSplitter::finish() {
  if (!transport_) return;
  for (int r = 1; r < transport_->size(); ++r) {
    while (!heard_[static_cast<std::size_t>(r)]) {
      const TransportMessage msg = transport_->receive();  // a first request ("R") still on its way
      heard_[static_cast<std::size_t>(msg.from)] = true;
    }
  }
  for (int r = 1; r < transport_->size(); ++r) transport_->send(r, "S");
  idle_.clear();
}

void serve(const WorkFn& work, Transport& transport) {
  transport.send(0, "R");
  for (;;) {
    const TransportMessage msg = transport.receive();
    if (msg.bytes.empty() || msg.bytes[0] != 'W') return;  // "S"
    const std::size_t item = std::strtoull(msg.bytes.c_str() + 1, nullptr, 10);
    transport.send(0, "D" + std::to_string(item) + "\n" + work(item));
  }
}

bool launched_by_mpi() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE", "PMI_RANK"})
    if (std::getenv(v) != nullptr) return true;
  return false;
}

}  // namespace scalescope::planner
