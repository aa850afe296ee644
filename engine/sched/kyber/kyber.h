// Kyber: a standalone model of block/kyber-iosched.c — per-domain token depths, per-ctx
// lists flushed per hctx, domain batching, latency histograms and the depth timer.
//
// Not modelled: the per-CPU split of the latency histograms (one queue-wide histogram
// holds the same sums), the 8 rotating sbitmap wait queues (a FIFO of waiting hctxs per
// domain, woken wake_batch at a time), token bit positions (a count), and the
// blk_stat accounting that kyber switches on.
#ifndef BLKBENCH_ENGINE_SCHED_KYBER_H_
#define BLKBENCH_ENGINE_SCHED_KYBER_H_

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <span>
#include <vector>

#include "engine/sched/elevator.h"
#include "engine/sched/elevator_type.h"

namespace blkbench::engine {

// Scheduling domains (kyber_sched_domain()).
enum class KyberDomain : uint8_t { kRead = 0, kWrite = 1, kDiscard = 2, kOther = 3 };
inline constexpr int kKyberNumDomains = 4;
inline constexpr int kKyberLatencyDomains = 3;  // KYBER_OTHER is not measured

// Defaults (block/kyber-iosched.c, top of file).
inline constexpr std::array<uint32_t, kKyberNumDomains> kKyberDepth = {256, 128, 64, 16};
inline constexpr std::array<uint32_t, kKyberNumDomains> kKyberBatchSize = {16, 8, 1, 1};
inline constexpr std::array<uint64_t, kKyberLatencyDomains> kKyberLatencyTargetNs = {
    2 * kNsPerMs, 10 * kNsPerMs, 5'000 * kNsPerMs};
inline constexpr uint32_t kKyberAsyncPercent = 75;                      // KYBER_ASYNC_PERCENT
inline constexpr uint64_t kKyberTimerPeriodNs = 100 * kNsPerMs;         // timer_reduce(HZ / 10)
inline constexpr uint64_t kKyberPercentileWindowNs = 1'000 * kNsPerMs;  // or 500 samples
inline constexpr int kKyberLatencyShift = 2;                            // KYBER_LATENCY_SHIFT
inline constexpr int kKyberGoodBuckets = 1 << kKyberLatencyShift;       // <= target
inline constexpr int kKyberLatencyBuckets = 2 << kKyberLatencyShift;    // 8

struct KyberTunables {  // the read_lat_nsec / write_lat_nsec sysfs attributes
  uint64_t read_lat_ns = kKyberLatencyTargetNs[0];
  uint64_t write_lat_ns = kKyberLatencyTargetNs[1];
};

class Kyber final : public Elevator {
 public:
  explicit Kyber(KyberTunables tunables = {});

  absl::Status Init(const ElevatorQueueLimits& limits) override;
  absl::Status Exit() override;
  BioMergeResult BioMerge(const SchedBio& bio) override;
  std::optional<uint32_t> LimitDepth(bool write, bool sync) const override;
  void InsertRequests(std::span<SchedRequest* const> rqs, InsertFlags flags, uint64_t now_ns,
                      std::vector<SchedRequest*>& freed) override;
  SchedRequest* DispatchRequest(uint64_t now_ns) override { return DispatchRequestFor(0, now_ns); }
  SchedRequest* DispatchRequestFor(uint32_t hctx, uint64_t now_ns) override;
  bool HasWork() const override;
  bool HasWorkFor(uint32_t hctx) const override;
  bool MayDispatch(uint32_t hctx, uint64_t now_ns) const override;
  bool SingleQueue() const override { return false; }
  void FinishRequest(SchedRequest& rq) override;
  // kyber_finish_request() serves requeue_request too: the token goes back.
  void RequeueRequest(SchedRequest& rq) override {
    ClearToken(rq);
    Priv(rq).started = false;
  }
  void CompletedRequest(SchedRequest& rq, uint64_t now_ns) override;
  void PrepareRequest(SchedRequest& rq) override { rq_data_.Reset(rq); }
  uint64_t TimerDeadline() const override { return timer_ns_; }
  void TimerExpired(uint64_t now_ns) override;
  void TakeRunRequests(std::vector<uint32_t>& hctxs) override;
  const ElevatorCounters& counters() const override { return counters_; }

  static KyberDomain DomainOf(bool write, SchedOp op);  // kyber_sched_domain()
  uint32_t depth(KyberDomain d) const { return tokens_[static_cast<int>(d)].depth; }
  uint32_t tokens_in_use(KyberDomain d) const { return tokens_[static_cast<int>(d)].in_use; }
  uint32_t async_depth() const { return async_depth_; }
  uint64_t throttled() const { return throttled_; }  // trace_kyber_throttled events

 private:
  // rq->elv.priv[]: the domain token, and the request's state.
  struct KyberRq {
    bool counted = false;  // counted in counters_.inserted
    bool queued = false;   // on a kcq list
    bool started = false;  // handed to the driver (RQF_STARTED)
    int32_t token = -1;    // the domain token (rq->elv.priv[0]), -1 = none
  };
  KyberRq& Priv(const SchedRequest& rq) { return rq_data_[rq]; }
  const KyberRq& Priv(const SchedRequest& rq) const { return rq_data_[rq]; }

  using List = std::deque<SchedRequest*>;
  // struct kyber_ctx_queue.
  struct Kcq {
    std::array<List, kKyberNumDomains> rq_list;
  };
  // struct kyber_hctx_data.
  struct Hctx {
    std::array<List, kKyberNumDomains> rqs;              // flushed, waiting for a token
    std::map<uint32_t, Kcq> kcqs;                        // by cpu: the index_hw order
    std::array<uint32_t, kKyberNumDomains> busy_kcqs{};  // bits set in kcq_map[domain]
    uint32_t cur_domain = 0;
    uint32_t batching = 0;
    std::array<bool, kKyberNumDomains> waiting{};  // domain_wait queued
  };
  // kqd->domain_tokens[domain]: an sbitmap_queue reduced to a count.
  struct Tokens {
    uint32_t depth = 0;
    uint32_t in_use = 0;
    uint32_t wake_batch = 1;
    uint64_t completion_cnt = 0;
    std::deque<uint32_t> waiters;  // hctxs
  };
  using Histogram = std::array<uint32_t, kKyberLatencyBuckets>;

  static int Dom(const SchedRequest& rq) { return static_cast<int>(DomainOf(rq.write, rq.op)); }
  Hctx& HctxAt(uint32_t index);
  bool GetToken(Hctx& khd, uint32_t hctx, int domain);
  void ClearToken(SchedRequest& rq);
  SchedRequest* DispatchCurDomain(Hctx& khd, uint32_t hctx);
  bool DomainReady(const Hctx& khd, int domain) const;
  void Resize(int domain, uint32_t depth);
  int CalculatePercentile(int domain, int type, uint32_t percentile, uint64_t now_ns);
  uint64_t Target(int domain) const;

  KyberTunables tunables_;
  ElevatorQueueLimits limits_;
  uint32_t async_depth_ = 0;
  std::vector<Hctx> hctxs_;
  std::array<Tokens, kKyberNumDomains> tokens_;
  // [domain][KYBER_TOTAL_LATENCY, KYBER_IO_LATENCY]: new samples, and the aggregate the
  // timer computes percentiles on (kqd->latency_buckets).
  std::array<std::array<Histogram, 2>, kKyberLatencyDomains> cpu_buckets_{};
  std::array<std::array<Histogram, 2>, kKyberLatencyDomains> buckets_{};
  std::array<uint64_t, kKyberLatencyDomains> latency_timeout_ns_{};
  std::array<int, kKyberLatencyDomains> domain_p99_{};
  uint64_t timer_ns_ = kNoTimer;
  std::vector<uint32_t> run_requests_;
  uint64_t queued_ = 0;
  uint64_t throttled_ = 0;
  RequestData<KyberRq> rq_data_;
  ElevatorCounters counters_;
};

// The registry's entry (struct elevator_type kyber_sched): the factory takes the cell's
// read_lat_nsec and write_lat_nsec.
const ElevatorType& KyberType();

}  // namespace blkbench::engine

#endif  // BLKBENCH_ENGINE_SCHED_KYBER_H_
