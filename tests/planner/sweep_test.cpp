// Sweeps: spec parsing (product order, errors with JSON paths), the self-scheduling work split over threads
// and ranks (an in-process transport), and the journal (resume, torn lines, another spec refused).
#include <gtest/gtest.h>
#include <unistd.h>

#include <condition_variable>
#include <deque>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>

#include "scalescope/planner/sweep.hpp"
#include "scalescope/planner/plan_mpi.hpp"
#include "scalescope/planner/sweep_output.hpp"

namespace scalescope::planner {
namespace {

Json spec_json() {
  return Json::parse(R"({"format": "scalescope.sweep/1", "mode": "simulate", "models": ["llama3-8b", "llama2-7b"],
    "clusters": ["dgx-h100-8"], "gpus": [8, 16], "global_batches": [32, 64, 128], "plans": ["tp=2", "tp=4,pp=2"]})");
}

TEST(SweepSpec, ProductHasEveryCombinationInNestedOrder) {
  auto s = parse_sweep_spec(spec_json(), "s.json");
  ASSERT_TRUE(s) << s.error().str();
  // 2 models x 1 cluster x 1 calibration x 1 stack x 2 gpus x 3 batches x 2 plans = 24; plans vary fastest.
  ASSERT_EQ(s->points.size(), 24u);
  EXPECT_EQ(s->points[0].fixed, "tp=2");
  EXPECT_EQ(s->points[1].fixed, "tp=4,pp=2");
  EXPECT_EQ(s->points[2].gbs, 64);
  EXPECT_EQ(s->points[6].gpus, 16);
  EXPECT_EQ(s->points[12].model, "llama2-7b");
  EXPECT_EQ(s->points[23].stack, "fused");
  EXPECT_EQ(s->fingerprint.size(), 16u);
  Json other = spec_json();
  other["gpus"] = Json::array({8, 32});
  EXPECT_NE(parse_sweep_spec(other, "s.json")->fingerprint, s->fingerprint);
}

TEST(SweepSpec, ErrorsNameTheJsonPath) {
  auto check = [](Json j, const std::string& path, const std::string& words) {
    auto s = parse_sweep_spec(j, "s.json");
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().file, "s.json");
    EXPECT_EQ(s.error().path, path) << s.error().str();
    EXPECT_NE(s.error().message.find(words), std::string::npos) << s.error().str();
  };
  Json j = spec_json();
  j["gpus"] = Json::array({8, 0});
  check(j, "$.gpus[1]", "positive");
  j = spec_json();
  j["plans"] = Json::array({"tp=2", "tp=2,gbs=8"});
  check(j, "$.plans[1]", "gbs");
  j = spec_json();
  j["typo"] = 1;
  check(j, "$.typo", "unknown key");
  j = spec_json();
  j["constraints"] = Json::array({"tp=8"});
  check(j, "$.constraints", "simulate");
  j = spec_json();
  j.erase("plans");
  j["mode"] = "plan";
  j["constraints"] = Json::array({"tp=eight"});
  check(j, "$.constraints[0]", "tp");
  j = spec_json();
  j["points"] = Json::array();
  check(j, "$.models", "not both");
}

TEST(SweepSpec, UnloadableInputsAreFoundBeforeAnyPointRuns) {
  Json j = spec_json();
  j["clusters"] = Json::array({"dgx-h100-8", "no-such-cluster"});
  auto s = parse_sweep_spec(j, "s.json");
  ASSERT_TRUE(s);
  auto checked = check_sweep_inputs(*s, {});
  ASSERT_FALSE(checked);
  EXPECT_EQ(checked.error().path, "$.clusters[1]");
  EXPECT_NE(checked.error().message.find("no-such-cluster"), std::string::npos);
}

/// Ranks as threads of one process: each has a mailbox.
class LoopbackNet {
 public:
  explicit LoopbackNet(int n) : boxes_(static_cast<std::size_t>(n)) {}
  struct Box {
    std::mutex m;
    std::condition_variable cv;
    std::deque<TransportMessage> q;
  };
  class Rank : public Transport {
   public:
    Rank(LoopbackNet& net, int rank) : net_(net), rank_(rank) {}
    int rank() const override { return rank_; }
    int size() const override { return static_cast<int>(net_.boxes_.size()); }
    void send(int to, const std::string& bytes) override {
      Box& b = net_.boxes_[static_cast<std::size_t>(to)];
      std::lock_guard lock(b.m);
      b.q.push_back({rank_, bytes});
      b.cv.notify_one();
    }
    std::optional<TransportMessage> try_receive() override {
      Box& b = net_.boxes_[static_cast<std::size_t>(rank_)];
      std::lock_guard lock(b.m);
      if (b.q.empty()) return std::nullopt;
      TransportMessage m = std::move(b.q.front());
      b.q.pop_front();
      return m;
    }
    TransportMessage receive() override {
      Box& b = net_.boxes_[static_cast<std::size_t>(rank_)];
      std::unique_lock lock(b.m);
      b.cv.wait(lock, [&] { return !b.q.empty(); });
      TransportMessage m = std::move(b.q.front());
      b.q.pop_front();
      return m;
    }

   private:
    LoopbackNet& net_;
    int rank_;
  };
  std::vector<Box> boxes_;
};

TEST(WorkSplit, EveryItemOnceOverRanksAndRoundsWhateverTheirSpeed) {
  LoopbackNet net(4);
  std::vector<std::unique_ptr<LoopbackNet::Rank>> ranks;
  for (int r = 0; r < 4; ++r) ranks.push_back(std::make_unique<LoopbackNet::Rank>(net, r));
  std::vector<std::size_t> round1, round2;
  for (std::size_t i = 0; i < 60; ++i) round1.push_back(i);
  for (std::size_t i = 100; i < 103; ++i) round2.push_back(i);
  // Rank 3 is stalled: on each item it holds it until every other item of that round has been
  // computed by someone else. A dynamic split finishes the round around it; a static split (a fixed
  // share per rank) would leave rank 3's share undone and the wait would time out. No timing is
  // involved: the test depends on the order of events, not on how fast the machine is.
  std::mutex m;
  std::condition_variable cv;
  std::set<std::size_t> computed;
  std::multiset<int> computed_by;
  bool stall_timed_out = false;
  auto work_on = [&](int rank) {
    return [&, rank](std::size_t item) {
      std::unique_lock lock(m);
      if (rank == 3) {
        const auto& round = item < 100 ? round1 : round2;
        const auto others_done = [&] {
          for (std::size_t i : round)
            if (i != item && !computed.contains(i)) return false;
          return true;
        };
        if (!cv.wait_for(lock, std::chrono::seconds(60), others_done)) stall_timed_out = true;
      }
      computed.insert(item);
      computed_by.insert(rank);
      cv.notify_all();
      return "r" + std::to_string(item * item);
    };
  };
  std::vector<std::thread> workers;
  for (int r = 1; r < 4; ++r) workers.emplace_back([&, r] { serve(work_on(r), *ranks[static_cast<std::size_t>(r)]); });
  WorkSplitter split(ranks[0].get(), 2);
  std::map<std::size_t, std::string> got;
  const DeliverFn deliver = [&](std::size_t item, std::string r) { EXPECT_TRUE(got.emplace(item, r).second); };
  split.run(round1, work_on(0), deliver);
  EXPECT_EQ(got.size(), 60u);  // a round returns only when every item is in
  split.run(round2, work_on(0), deliver);
  split.run({}, work_on(0), deliver);
  split.finish();
  for (auto& t : workers) t.join();
  ASSERT_EQ(got.size(), 63u);
  for (const auto& [item, r] : got) EXPECT_EQ(r, "r" + std::to_string(item * item));
  EXPECT_FALSE(stall_timed_out) << "the other ranks did not finish a round around the stalled rank";
  EXPECT_LE(computed_by.count(3), 2u);  // at most one item per round while stalled
}

TEST(SweepJournal, ResumesWholeLinesDropsATornOneAndRefusesAnotherSpec) {
  const auto dir = std::filesystem::temp_directory_path() / ("scalescope_sweep_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto out = dir / "r.csv";
  auto spec = parse_sweep_spec(spec_json(), "s.json");
  ASSERT_TRUE(spec);
  {
    auto j = SweepJournal::open(out, *spec, false);
    ASSERT_TRUE(j) << j.error().str();
    ASSERT_TRUE(j->append(3, {Json{{"point", 3}}}));
    ASSERT_TRUE(j->append(0, {Json{{"point", 0}}}));
    auto second = SweepJournal::open(out, *spec, false);  // a second writer is refused while one holds it
    ASSERT_FALSE(second);
    EXPECT_NE(second.error().message.find("locked"), std::string::npos);
  }
  std::ofstream(out.string() + ".partial", std::ios::app) << "{\"point\": 5, \"ro";  // killed mid-line
  {
    auto j = SweepJournal::open(out, *spec, false);
    ASSERT_TRUE(j) << j.error().str();
    ASSERT_EQ(j->done().size(), 2u);
    EXPECT_TRUE(j->done().count(0) && j->done().count(3));
    ASSERT_TRUE(j->append(5, {Json{{"point", 5}}}));
  }
  {
    auto j = SweepJournal::open(out, *spec, false);
    ASSERT_TRUE(j);
    EXPECT_EQ(j->done().size(), 3u);  // the torn line was cut before point 5 was appended
  }
  Json other = spec_json();
  other["global_batches"] = Json::array({32});
  auto j = SweepJournal::open(out, *parse_sweep_spec(other, "s.json"), false);
  ASSERT_FALSE(j);
  EXPECT_EQ(j.error().path, "line 1");
  EXPECT_TRUE(SweepJournal::open(out, *parse_sweep_spec(other, "s.json"), true));  // --restart
  std::filesystem::remove_all(dir);
}

TEST(PlanMpi, ARankedPlanCrossesRanksBitForBit) {
  auto run = run_plan([] {
    PlanRequest q;
    q.model = "llama3-8b";
    q.cluster = "dgx-h100-8";
    q.gbs = 32;
    q.top = 1;
    q.flow_top = 0;
    return q;
  }());
  ASSERT_TRUE(run) << run.error().str();
  ASSERT_EQ(run->result.ranked.size(), 1u);
  const RankedPlan& a = run->result.ranked[0];
  auto b = decode_ranked(encode_ranked(a));
  ASSERT_TRUE(b);
  EXPECT_EQ(b->plan, a.plan);
  EXPECT_EQ(b->step_time_s, a.step_time_s);  // exact: the ranking on rank 0 must not change
  EXPECT_EQ(b->tokens_per_s, a.tokens_per_s);
  EXPECT_EQ(b->mfu, a.mfu);
  EXPECT_EQ(b->memory_GiB, a.memory_GiB);
  for (std::size_t i = 0; i < a.breakdown.parts.size(); ++i) EXPECT_EQ(b->breakdown.parts[i].value, a.breakdown.parts[i].value);
  EXPECT_EQ(b->limiter, a.limiter);
  EXPECT_FALSE(decode_ranked(""));  // a failed plan
}

}  // namespace
}  // namespace scalescope::planner
