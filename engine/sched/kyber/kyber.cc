// Kyber: the bodies of block/kyber-iosched.c's elevator_mq_ops. Kyber has no global
// lock: khd->lock (per hctx) serialises dispatch and kcq->lock (per ctx) insertion and
// merging; the caller charges those.
#include "engine/sched/kyber/kyber.h"

#include <algorithm>
#include <cassert>

#include "absl/strings/str_cat.h"

namespace blkbench::engine {
namespace {

constexpr int kTotal = 0;  // KYBER_TOTAL_LATENCY
constexpr int kIo = 1;     // KYBER_IO_LATENCY

// sbitmap_queue's wake_batch: clamp(depth / 8, 1, 8) (SBQ_WAKE_BATCH).
uint32_t WakeBatch(uint32_t depth) { return std::clamp<uint32_t>(depth / 8, 1, 8); }

}  // namespace

Kyber::Kyber(KyberTunables tunables) : tunables_(tunables) {}

KyberDomain Kyber::DomainOf(bool write, SchedOp op) {
  switch (op) {
    case SchedOp::kReadWrite:
      return write ? KyberDomain::kWrite : KyberDomain::kRead;
    case SchedOp::kDiscard:
      return KyberDomain::kDiscard;
    case SchedOp::kOther:
      break;
  }
  return KyberDomain::kOther;
}

// kyber_init_sched() + kyber_init_hctx() + kyber_depth_updated().
absl::Status Kyber::Init(const ElevatorQueueLimits& limits) {
  if (limits.nr_requests == 0) return absl::InvalidArgumentError("nr_requests must be > 0");
  if (limits.nr_hw_queues == 0) return absl::InvalidArgumentError("nr_hw_queues must be > 0");
  limits_ = limits;
  rq_data_.Reserve(size_t{limits.nr_requests} * std::max<uint32_t>(1, limits.nr_hw_queues));
  async_depth_ = limits.nr_requests * kKyberAsyncPercent / 100;
  hctxs_.assign(limits.nr_hw_queues, Hctx{});
  for (int d = 0; d < kKyberNumDomains; ++d) {
    tokens_[d] = Tokens{};
    tokens_[d].depth = kKyberDepth[d];
    tokens_[d].wake_batch = WakeBatch(kKyberDepth[d]);
  }
  domain_p99_.fill(-1);
  return absl::OkStatus();
}

// kyber_exit_sched(): the counters balance and no token is held.
absl::Status Kyber::Exit() {
  for (int d = 0; d < kKyberNumDomains; ++d) {
    if (tokens_[d].in_use != 0) {
      return absl::FailedPreconditionError(absl::StrCat("kyber torn down with ", tokens_[d].in_use,
                                                        " tokens of domain ", d, " held"));
    }
  }
  return counters_.CheckBalanced(queued_);
}

// kyber_limit_depth(): async requests are capped at 75% of the sched tags.
std::optional<uint32_t> Kyber::LimitDepth(bool write, bool sync) const {
  const bool op_sync = !write || sync;
  if (op_sync) return std::nullopt;
  return async_depth_;
}

Kyber::Hctx& Kyber::HctxAt(uint32_t index) {
  assert(index < hctxs_.size());
  return hctxs_[index];
}

uint64_t Kyber::Target(int domain) const {
  if (domain == 0) return tunables_.read_lat_ns;
  if (domain == 1) return tunables_.write_lat_ns;
  return kKyberLatencyTargetNs[domain];
}

// kyber_bio_merge() → blk_bio_list_merge(): the last 8 requests of the submitting ctx's
// list for the bio's domain, newest first; the first that accepts or refuses decides.
BioMergeResult Kyber::BioMerge(const SchedBio& bio) {
  Hctx& khd = HctxAt(bio.hctx);
  auto kcq = khd.kcqs.find(bio.cpu);
  if (kcq == khd.kcqs.end()) return {};
  const List& list = kcq->second.rq_list[static_cast<int>(DomainOf(bio.write, bio.op))];
  int checked = 8;
  for (auto it = list.rbegin(); it != list.rend() && checked-- > 0; ++it) {
    SchedRequest& rq = **it;
    if (rq.write != bio.write || rq.ioprio != bio.ioprio) continue;  // !blk_rq_merge_ok()
    MergeType type = MergeType::kNone;
    if (rq.End() == bio.sector) {
      type = MergeType::kBack;
    } else if (rq.sector == bio.End()) {
      type = MergeType::kFront;
    } else {
      continue;
    }
    if (rq.sectors + bio.sectors > limits_.max_sectors) return {};  // BIO_MERGE_FAILED
    if (type == MergeType::kFront) rq.sector = bio.sector;
    rq.sectors += bio.sectors;
    ++counters_.bio_merges;
    return {type, &rq, nullptr};
  }
  return {};
}

// kyber_insert_requests(): onto the submitting ctx's list for the request's domain.
void Kyber::InsertRequests(std::span<SchedRequest* const> rqs, InsertFlags flags,
                           uint64_t /*now_ns*/, std::vector<SchedRequest*>& /*freed*/) {
  for (SchedRequest* rq : rqs) {
    assert(!Priv(*rq).queued);
    if (!Priv(*rq).counted) {
      Priv(*rq).counted = true;
      ++counters_.inserted;
    } else {
      ++counters_.reinserted;
    }
    Hctx& khd = HctxAt(rq->hctx);
    const int d = Dom(*rq);
    List& head = khd.kcqs[rq->cpu].rq_list[d];
    if (head.empty()) ++khd.busy_kcqs[d];  // sbitmap_set_bit(&khd->kcq_map[domain])
    if (flags.at_head) {
      head.push_front(rq);
    } else {
      head.push_back(rq);
    }
    Priv(*rq).queued = true;
    ++queued_;
  }
}

// kyber_get_domain_token(): a token, or join the domain's wait queue (once).
bool Kyber::GetToken(Hctx& khd, uint32_t hctx, int domain) {
  Tokens& t = tokens_[domain];
  if (t.in_use < t.depth) {
    ++t.in_use;
    if (khd.waiting[domain]) {  // got one while queued: leave the wait queue
      khd.waiting[domain] = false;
      t.waiters.erase(std::find(t.waiters.begin(), t.waiters.end(), hctx));
    }
    return true;
  }
  if (!khd.waiting[domain]) {
    khd.waiting[domain] = true;
    t.waiters.push_back(hctx);
  }
  ++throttled_;
  return false;
}

// rq_clear_domain_token() → sbitmap_queue_clear(): every wake_batch-th free wakes up to
// wake_batch waiting hctxs, which kyber_domain_wake() turns into async queue runs.
void Kyber::ClearToken(SchedRequest& rq) {
  if (Priv(rq).token < 0) return;
  Priv(rq).token = -1;
  Tokens& t = tokens_[Dom(rq)];
  assert(t.in_use > 0);
  --t.in_use;
  if (t.waiters.empty() || ++t.completion_cnt % t.wake_batch != 0) return;
  for (uint32_t i = 0; i < t.wake_batch && !t.waiters.empty(); ++i) {
    const uint32_t h = t.waiters.front();
    t.waiters.pop_front();
    hctxs_[h].waiting[Dom(rq)] = false;
    run_requests_.push_back(h);
  }
}

// kyber_dispatch_cur_domain(): a flushed request needs only a token; otherwise flush
// the busy kcqs (in ctx order) — but only once a token is in hand, so that requests
// left in the kcqs can still be merged.
SchedRequest* Kyber::DispatchCurDomain(Hctx& khd, uint32_t hctx) {
  const int d = static_cast<int>(khd.cur_domain);
  List& rqs = khd.rqs[d];
  if (rqs.empty() && khd.busy_kcqs[d] == 0) return nullptr;
  if (!GetToken(khd, hctx, d)) return nullptr;
  if (rqs.empty()) {  // kyber_flush_busy_kcqs()
    for (auto& [cpu, kcq] : khd.kcqs) {
      List& l = kcq.rq_list[d];
      if (l.empty()) continue;
      rqs.insert(rqs.end(), l.begin(), l.end());
      l.clear();
    }
    khd.busy_kcqs[d] = 0;
  }
  SchedRequest* rq = rqs.front();
  rqs.pop_front();
  ++khd.batching;
  Priv(*rq).token = static_cast<int32_t>(tokens_[d].in_use - 1);
  return rq;
}

// kyber_dispatch_request(): continue the batch, else rotate through the domains.
SchedRequest* Kyber::DispatchRequestFor(uint32_t hctx, uint64_t /*now_ns*/) {
  Hctx& khd = HctxAt(hctx);
  SchedRequest* rq = nullptr;
  if (khd.batching < kKyberBatchSize[khd.cur_domain]) rq = DispatchCurDomain(khd, hctx);
  if (rq == nullptr) {
    khd.batching = 0;
    for (int i = 0; i < kKyberNumDomains && rq == nullptr; ++i) {
      khd.cur_domain = (khd.cur_domain + 1) % kKyberNumDomains;
      rq = DispatchCurDomain(khd, hctx);
    }
  }
  if (rq == nullptr) return nullptr;
  Priv(*rq).queued = false;
  Priv(*rq).started = true;
  --queued_;
  ++counters_.dispatched;
  return rq;
}

bool Kyber::DomainReady(const Hctx& khd, int d) const {
  return (!khd.rqs[d].empty() || khd.busy_kcqs[d] != 0) && tokens_[d].in_use < tokens_[d].depth;
}

// Dispatch succeeds iff some domain has requests and a free token: the rotation visits
// every domain, the current one last.
bool Kyber::MayDispatch(uint32_t hctx, uint64_t /*now_ns*/) const {
  const Hctx& khd = hctxs_[hctx];
  for (int d = 0; d < kKyberNumDomains; ++d) {
    if (DomainReady(khd, d)) return true;
  }
  return false;
}

bool Kyber::HasWorkFor(uint32_t hctx) const {  // kyber_has_work()
  const Hctx& khd = hctxs_[hctx];
  for (int d = 0; d < kKyberNumDomains; ++d) {
    if (!khd.rqs[d].empty() || khd.busy_kcqs[d] != 0) return true;
  }
  return false;
}

bool Kyber::HasWork() const {
  for (uint32_t h = 0; h < hctxs_.size(); ++h) {
    if (HasWorkFor(h)) return true;
  }
  return false;
}

// kyber_finish_request(): give the token back.
void Kyber::FinishRequest(SchedRequest& rq) {
  ClearToken(rq);
  Priv(rq).started = false;
  if (Priv(rq).counted) {
    Priv(rq).counted = false;
    ++counters_.completed;
  }
}

void Kyber::TakeRunRequests(std::vector<uint32_t>& hctxs) {
  hctxs.insert(hctxs.end(), run_requests_.begin(), run_requests_.end());
  run_requests_.clear();
}

// kyber_completed_request() + add_latency_sample(): buckets of a quarter of the target;
// the timer is pulled in to at most 100 ms from now (timer_reduce()).
void Kyber::CompletedRequest(SchedRequest& rq, uint64_t now_ns) {
  const int d = Dom(rq);
  if (d >= kKyberLatencyDomains) return;
  const uint64_t target = Target(d);
  auto add = [&](int type, uint64_t latency) {
    uint32_t bucket = 0;
    if (latency > 0) {
      const uint64_t divisor = std::max<uint64_t>(target >> kKyberLatencyShift, 1);
      bucket = static_cast<uint32_t>(
          std::min<uint64_t>((latency - 1) / divisor, kKyberLatencyBuckets - 1));
    }
    ++cpu_buckets_[d][type][bucket];
  };
  add(kTotal, now_ns > rq.submit_time_ns ? now_ns - rq.submit_time_ns : 0);
  add(kIo, now_ns > rq.io_start_time_ns ? now_ns - rq.io_start_time_ns : 0);
  timer_ns_ = std::min(timer_ns_, now_ns + kKyberTimerPeriodNs);
}

// calculate_percentile(): the bucket holding the given percentile, once there are 500
// samples or a second has passed since the domain first had samples; -1 before that.
// The one-second stamp is shared by both latency types, as in the kernel.
int Kyber::CalculatePercentile(int domain, int type, uint32_t percentile, uint64_t now_ns) {
  Histogram& b = buckets_[domain][type];
  uint32_t samples = 0;
  for (uint32_t n : b) samples += n;
  if (samples == 0) return -1;
  uint64_t& timeout = latency_timeout_ns_[domain];
  if (timeout == 0) timeout = now_ns + kKyberPercentileWindowNs;
  if (samples < 500 && now_ns < timeout) return -1;
  timeout = 0;
  uint32_t rank = (samples * percentile + 99) / 100;
  int bucket = 0;
  for (; bucket < kKyberLatencyBuckets - 1; ++bucket) {
    if (b[bucket] >= rank) break;
    rank -= b[bucket];
  }
  b.fill(0);
  return bucket;
}

// kyber_resize_domain().
void Kyber::Resize(int domain, uint32_t depth) {
  depth = std::clamp<uint32_t>(depth, 1, kKyberDepth[domain]);
  Tokens& t = tokens_[domain];
  if (depth == t.depth) return;
  t.depth = depth;  // tokens above the new depth stay held until freed
  t.wake_batch = WakeBatch(depth);
}

// kyber_timer_fn(): congestion if any domain's I/O-latency p90 is past its target; then
// each domain with a total-latency p99 scales its depth by (p99 bucket + 1) / 4 — down
// for good domains under congestion, up for domains that are themselves late.
void Kyber::TimerExpired(uint64_t now_ns) {
  timer_ns_ = kNoTimer;
  for (int d = 0; d < kKyberLatencyDomains; ++d) {
    for (int type : {kTotal, kIo}) {
      for (int i = 0; i < kKyberLatencyBuckets; ++i) {
        buckets_[d][type][i] += cpu_buckets_[d][type][i];
        cpu_buckets_[d][type][i] = 0;
      }
    }
  }
  bool bad = false;
  for (int d = 0; d < kKyberLatencyDomains; ++d) {
    if (CalculatePercentile(d, kIo, 90, now_ns) >= kKyberGoodBuckets) bad = true;
  }
  for (int d = 0; d < kKyberLatencyDomains; ++d) {
    int p99 = CalculatePercentile(d, kTotal, 99, now_ns);
    if (bad) {
      if (p99 < 0) p99 = domain_p99_[d];
      domain_p99_[d] = -1;
    } else if (p99 >= 0) {
      domain_p99_[d] = p99;
    }
    if (p99 < 0) continue;
    if (bad || p99 >= kKyberGoodBuckets) {
      const uint32_t orig = tokens_[d].depth;
      Resize(d, (orig * static_cast<uint32_t>(p99 + 1)) >> kKyberLatencyShift);
    }
  }
}

namespace {

// kyber (block/kyber-iosched.c) with the cell's read_lat_nsec / write_lat_nsec.
std::unique_ptr<Elevator> CreateKyber(const ElevatorSetup& setup) {
  KyberTunables t;
  setup.SetUint("read_lat_nsec", t.read_lat_ns);
  setup.SetUint("write_lat_nsec", t.write_lat_ns);
  return std::make_unique<Kyber>(t);
}

}  // namespace

const ElevatorType& KyberType() {
  // No global lock: per-ctx lists (kcq->lock, CPU-local) and per-hctx khd->lock.
  static const ElevatorType* const kType = new ElevatorType{
      .name = "kyber",
      .create = &CreateKyber,
      .tunables = {"read_lat_nsec", "write_lat_nsec"},
  };
  return *kType;
}

}  // namespace blkbench::engine
