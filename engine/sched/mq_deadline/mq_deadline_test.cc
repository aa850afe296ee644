// Tests for the standalone mq-deadline model: sort order, batching, expiry, starvation,
// priority levels and aging, merging, at_head insertion, limit_depth per era, balance.
#include "engine/sched/mq_deadline/mq_deadline.h"

#include <cstdint>
#include <deque>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace blkbench::engine {
namespace {

constexpr uint64_t kSec = 1'000'000'000;

class MqDeadlineTest : public ::testing::Test {
 protected:
  MqDeadline& Start(DeadlineProfile profile = {}, DeadlineTunables tunables = {},
                    ElevatorQueueLimits limits = {}) {
    dd_ = std::make_unique<MqDeadline>(profile, tunables);
    EXPECT_TRUE(dd_->Init(limits).ok());
    return *dd_;
  }

  SchedRequest* Make(uint64_t sector, bool write = false, IoprioClass prio = IoprioClass::kBe,
                     uint64_t submit_ns = 0, uint32_t sectors = 8) {
    SchedRequest& rq = pool_.emplace_back();
    rq.id = pool_.size();
    rq.sector = sector;
    rq.sectors = sectors;
    rq.write = write;
    rq.sync = !write;
    rq.ioprio = prio;
    rq.submit_time_ns = submit_ns;
    dd_->PrepareRequest(rq);
    return &rq;
  }

  // Inserts one request per call so no batch-level merge happens unless asked for.
  SchedRequest* Add(uint64_t sector, bool write = false, IoprioClass prio = IoprioClass::kBe,
                    uint64_t now_ns = 0, bool at_head = false) {
    SchedRequest* rq = Make(sector, write, prio, now_ns);
    std::vector<SchedRequest*> freed;
    SchedRequest* batch[] = {rq};
    dd_->InsertRequests(batch, InsertFlags{.at_head = at_head}, now_ns, freed);
    for (SchedRequest* f : freed) dd_->FinishRequest(*f);
    return rq;
  }

  // Dispatches one request and completes it at once.
  SchedRequest* Next(uint64_t now_ns = 0) {
    SchedRequest* rq = dd_->DispatchRequest(now_ns);
    if (rq != nullptr) dd_->FinishRequest(*rq);
    return rq;
  }

  std::vector<uint64_t> DrainSectors(uint64_t now_ns = 0) {
    std::vector<uint64_t> out;
    while (SchedRequest* rq = Next(now_ns)) out.push_back(rq->sector);
    return out;
  }

  std::unique_ptr<MqDeadline> dd_;
  std::deque<SchedRequest> pool_;
};

TEST_F(MqDeadlineTest, SectorOrderWithinBatch) {
  Start();
  for (uint64_t s : {500, 100, 300, 200}) Add(s);
  EXPECT_EQ(DrainSectors(), (std::vector<uint64_t>{100, 200, 300, 500}));
  EXPECT_TRUE(dd_->Exit().ok());
}

TEST_F(MqDeadlineTest, FifoBatchThenSwitchesDirection) {
  Start({}, DeadlineTunables{.fifo_batch = 4});
  for (int i = 0; i < 6; ++i) Add(1'000'000 + i * 100, /*write=*/true);
  for (int i = 0; i < 8; ++i) Add(i * 100);
  // dd->last_dir starts at DD_WRITE, so the first batch is writes; after fifo_batch
  // requests the batch ends and reads are preferred (twice, writes_starved = 2).
  std::string dirs;
  while (SchedRequest* rq = Next()) dirs += rq->write ? 'W' : 'R';
  EXPECT_EQ(dirs, "WWWWRRRRRRRRWW");
  EXPECT_TRUE(dd_->Exit().ok());
}

TEST_F(MqDeadlineTest, ReadExpiryPreemptsSectorOrder) {
  Start({}, DeadlineTunables{.fifo_batch = 4});
  Add(10'000, false, IoprioClass::kBe, /*now_ns=*/0);  // expires at 500 ms
  for (int i = 0; i < 8; ++i) Add(i * 100, false, IoprioClass::kBe, 400 * kNsPerMs);
  // Not yet expired: sector order from the cursor.
  std::vector<uint64_t> got;
  got.reserve(4);
  for (int i = 0; i < 4; ++i) got.push_back(Next(450 * kNsPerMs)->sector);
  EXPECT_EQ(got, (std::vector<uint64_t>{0, 100, 200, 300}));
  // New batch after expiry: the FIFO head wins over the lower sectors.
  EXPECT_EQ(Next(600 * kNsPerMs)->sector, 10'000u);
  EXPECT_EQ(DrainSectors(600 * kNsPerMs), (std::vector<uint64_t>{400, 500, 600, 700}));
}

TEST_F(MqDeadlineTest, WritesStarvedForcesWriteAfterTwoReadBatches) {
  Start();  // fifo_batch 16, writes_starved 2
  for (int i = 0; i < 60; ++i) Add(i * 100);
  ASSERT_FALSE(Next()->write);  // a read batch starts before any write exists
  Add(1'000'000, /*write=*/true);
  Add(1'000'100, /*write=*/true);
  std::string dirs;
  while (SchedRequest* rq = Next()) dirs += rq->write ? 'W' : 'R';
  // 15 to finish batch 1, then batches 2 and 3 (starved 0→1→2), then writes.
  EXPECT_EQ(dirs, std::string(47, 'R') + "WW" + std::string(12, 'R'));
  EXPECT_TRUE(dd_->Exit().ok());
}

TEST_F(MqDeadlineTest, PriorityLevelsRtBeforeBeBeforeIdle) {
  Start();
  Add(100, false, IoprioClass::kIdle);
  Add(200, false, IoprioClass::kBe);
  Add(300, false, IoprioClass::kRt);
  SchedRequest* rt = dd_->DispatchRequest(0);
  ASSERT_NE(rt, nullptr);
  EXPECT_EQ(rt->ioprio, IoprioClass::kRt);
  // dd_queued(RT) != 0 while the RT request is in flight: lower levels wait.
  EXPECT_EQ(dd_->DispatchRequest(0), nullptr);
  EXPECT_TRUE(dd_->HasWork());
  dd_->FinishRequest(*rt);
  EXPECT_EQ(Next()->ioprio, IoprioClass::kBe);
  EXPECT_EQ(Next()->ioprio, IoprioClass::kIdle);
  EXPECT_EQ(Next(), nullptr);
  EXPECT_EQ(dd_->prio_stats(0).dispatched, 1u);
  EXPECT_TRUE(dd_->Exit().ok());
}

TEST_F(MqDeadlineTest, PrioAgingServesOldBeRequestDespiteRt) {
  Start();
  Add(100, false, IoprioClass::kBe, 0);
  Add(200, false, IoprioClass::kRt, 0);
  // 11 s later the BE request has waited more than prio_aging_expire (10 s).
  EXPECT_EQ(Next(11 * kSec)->ioprio, IoprioClass::kBe);
  EXPECT_EQ(Next(11 * kSec)->ioprio, IoprioClass::kRt);

  Start();
  Add(100, false, IoprioClass::kBe, 0);
  Add(200, false, IoprioClass::kRt, 0);
  EXPECT_EQ(Next(1 * kSec)->ioprio, IoprioClass::kRt);  // not aged yet

  Start(DeadlineProfile::ForKernel(5, 15));  // no prio aging in this era
  Add(100, false, IoprioClass::kBe, 0);
  Add(200, false, IoprioClass::kRt, 0);
  EXPECT_EQ(Next(11 * kSec)->ioprio, IoprioClass::kRt);
}

TEST_F(MqDeadlineTest, BackMergeViaHash) {
  Start();
  SchedRequest* a = Add(0);
  BioMergeResult r = dd_->BioMerge(SchedBio{.sector = 8, .sectors = 8});
  EXPECT_EQ(r.type, MergeType::kBack);
  EXPECT_EQ(r.rq, a);
  EXPECT_EQ(a->sectors, 16u);
  Add(1000);                                                // moves nothing: last_merge stays a
  r = dd_->BioMerge(SchedBio{.sector = 16, .sectors = 8});  // the hash was repositioned
  EXPECT_EQ(r.rq, a);
  EXPECT_EQ(dd_->BioMerge(SchedBio{.sector = 24, .sectors = 8, .write = true}).type,
            MergeType::kNone);  // direction mismatch
  EXPECT_EQ(dd_->counters().bio_merges, 2u);
}

TEST_F(MqDeadlineTest, FrontMergeViaSortTreeAndFollowOnMerge) {
  Start();
  Add(5000);                    // last_merge
  SchedRequest* b = Add(1000);  // [1000, 1008)
  BioMergeResult r = dd_->BioMerge(SchedBio{.sector = 992, .sectors = 8});
  EXPECT_EQ(r.type, MergeType::kFront);
  EXPECT_EQ(r.rq, b);
  EXPECT_EQ(b->sector, 992u);
  EXPECT_EQ(b->sectors, 16u);

  // A bio filling the gap between two requests merges them (attempt_back_merge).
  SchedRequest* c = Add(2000);
  SchedRequest* d = Add(2016);
  r = dd_->BioMerge(SchedBio{.sector = 2008, .sectors = 8});
  EXPECT_EQ(r.rq, c);
  EXPECT_EQ(r.freed, d);
  EXPECT_EQ(c->sectors, 24u);
  dd_->FinishRequest(*r.freed);
  EXPECT_EQ(DrainSectors(), (std::vector<uint64_t>{992, 2000, 5000}));
  EXPECT_TRUE(dd_->Exit().ok());

  Start({}, DeadlineTunables{.front_merges = false});
  Add(5000);
  Add(1000);
  EXPECT_EQ(dd_->BioMerge(SchedBio{.sector = 992, .sectors = 8}).type, MergeType::kNone);
}

TEST_F(MqDeadlineTest, InsertMergeFreesTheNewRequest) {
  Start();
  SchedRequest* a = Make(0);
  SchedRequest* b = Make(8);
  std::vector<SchedRequest*> freed;
  SchedRequest* batch[] = {a, b};
  dd_->InsertRequests(batch, {}, 0, freed);
  ASSERT_EQ(freed, std::vector<SchedRequest*>{b});
  EXPECT_EQ(a->sectors, 16u);
  dd_->FinishRequest(*b);
  EXPECT_EQ(dd_->counters().merged, 1u);
  EXPECT_EQ(DrainSectors(), std::vector<uint64_t>{0});
  EXPECT_TRUE(dd_->Exit().ok());
}

TEST_F(MqDeadlineTest, AtHeadInsertionGoesFirst) {
  Start();
  Add(100);
  Add(200);
  Add(9000, /*write=*/true, IoprioClass::kBe, 0, /*at_head=*/true);
  EXPECT_EQ(DrainSectors(), (std::vector<uint64_t>{9000, 100, 200}));
}

TEST_F(MqDeadlineTest, CursorVersusNextRq) {
  // 6.5+ resumes from latest_pos, so a request inserted behind next_rq is picked up.
  Start(DeadlineProfile::ForKernel(6, 10));
  Add(100);
  Add(300);
  EXPECT_EQ(Next()->sector, 100u);
  Add(200);
  EXPECT_EQ(Next()->sector, 200u);

  Start(DeadlineProfile::ForKernel(6, 1));
  Add(100);
  Add(300);
  EXPECT_EQ(Next()->sector, 100u);
  Add(200);
  EXPECT_EQ(Next()->sector, 300u);
}

TEST_F(MqDeadlineTest, LimitDepthPerEra) {
  struct Case {
    int major, minor;
    uint32_t nr, want;
  };
  for (const Case& c : {Case{6, 1, 64, 48}, Case{6, 1, 256, 192}, Case{6, 9, 64, 48},
                        Case{6, 10, 64, 64}, Case{6, 10, 256, 256}}) {
    Start(DeadlineProfile::ForKernel(c.major, c.minor), {},
          ElevatorQueueLimits{.nr_requests = c.nr});
    EXPECT_EQ(dd_->async_depth(), c.want) << c.major << "." << c.minor << " nr " << c.nr;
    EXPECT_EQ(dd_->LimitDepth(/*write=*/true, /*sync=*/false), c.want);
    EXPECT_EQ(dd_->LimitDepth(/*write=*/true, /*sync=*/true), c.want);
    EXPECT_EQ(dd_->LimitDepth(/*write=*/false, /*sync=*/false), c.want);  // async read
    EXPECT_FALSE(dd_->LimitDepth(/*write=*/false, /*sync=*/true).has_value());
  }
  Start(DeadlineProfile::ForKernel(5, 10));
  EXPECT_FALSE(dd_->LimitDepth(true, false).has_value());
}

// A random mix of inserts (some batched, some at head), bio merges and dispatches.
uint64_t RunMix(MqDeadline& dd, std::deque<SchedRequest>& pool, uint64_t seed) {
  std::mt19937_64 rng(seed);
  uint64_t hash = 1469598103934665603ull;
  std::vector<SchedRequest*> freed;
  std::vector<SchedRequest*> batch;
  uint64_t now = 0;
  for (int step = 0; step < 4000; ++step) {
    now += rng() % (5 * kNsPerMs);
    const uint64_t op = rng() % 10;
    const uint64_t sector = (rng() % 512) * 8;
    const bool write = rng() % 3 == 0;
    const auto prio = static_cast<IoprioClass>(rng() % 3);
    if (op < 2) {
      const BioMergeResult r =
          dd.BioMerge(SchedBio{.sector = sector, .sectors = 8, .write = write, .ioprio = prio});
      if (r.freed != nullptr) freed.push_back(r.freed);  // attempt_*_merge freed one
    } else if (op < 6) {
      batch.clear();
      for (uint64_t i = 0, n = 1 + rng() % 4; i < n; ++i) {
        SchedRequest& rq = pool.emplace_back();
        rq.id = pool.size();
        rq.sector = sector + i * 8;
        rq.sectors = 8;
        rq.write = write;
        rq.sync = !write;
        rq.ioprio = prio;
        rq.submit_time_ns = now;
        batch.push_back(&rq);
      }
      dd.InsertRequests(batch, InsertFlags{.at_head = rng() % 50 == 0}, now, freed);
    } else if (SchedRequest* rq = dd.DispatchRequest(now)) {
      hash = (hash ^ (rq->id * 31 + rq->sector)) * 1099511628211ull;
      dd.FinishRequest(*rq);
    }
    for (SchedRequest* f : freed) dd.FinishRequest(*f);
    freed.clear();
  }
  while (SchedRequest* rq = dd.DispatchRequest(now)) {
    hash = (hash ^ (rq->id * 31 + rq->sector)) * 1099511628211ull;
    dd.FinishRequest(*rq);
  }
  return hash;
}

TEST_F(MqDeadlineTest, CountersBalanceAfterDraining) {
  Start();
  RunMix(*dd_, pool_, 7);
  const ElevatorCounters& c = dd_->counters();
  EXPECT_GT(c.merged, 0u);
  EXPECT_GT(c.bio_merges, 0u);
  EXPECT_EQ(c.dispatched + c.merged, c.inserted);
  EXPECT_FALSE(dd_->HasWork());
  EXPECT_TRUE(dd_->Exit().ok()) << dd_->Exit();

  Start();
  Add(100);
  EXPECT_FALSE(dd_->Exit().ok());  // still queued
}

TEST_F(MqDeadlineTest, Deterministic) {
  std::deque<SchedRequest> p1, p2;
  MqDeadline a, b;
  ASSERT_TRUE(a.Init({}).ok());
  ASSERT_TRUE(b.Init({}).ok());
  EXPECT_EQ(RunMix(a, p1, 42), RunMix(b, p2, 42));
  EXPECT_EQ(a.counters().dispatched, b.counters().dispatched);
  MqDeadline old(DeadlineProfile::ForKernel(6, 1));
  ASSERT_TRUE(old.Init({}).ok());
  std::deque<SchedRequest> p3;
  RunMix(old, p3, 42);
  EXPECT_TRUE(old.Exit().ok());
}

}  // namespace
}  // namespace blkbench::engine
