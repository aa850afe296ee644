// Tests for the fio options of real job files (issue 14) in matrix files: each accepted
// form and what it stores, each bad form with its exact FILE:LINE:COL error, the engine's
// "not modelled" errors for sim: cells, and job files with them importing into matrices
// that validate (and that `fio --parse-only` accepts, where fio is installed).
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/resolved_job.h"
#include "common/testing/bssplit.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "workloads/fio_import.h"
#include "workloads/matrix.h"

namespace blkbench::workloads {
namespace {

using ::testing::HasSubstr;

absl::StatusOr<Matrix> Parse(const std::string& job_lines, const std::string& device = "null_blk") {
  return ParseMatrix(
      absl::StrCat("name: t\ntarget: {device_class: ", device, "}\njob:\n", job_lines), "m.yaml");
}

v1::JobSpec Good(const std::string& job_lines) {
  absl::StatusOr<Matrix> m = Parse(job_lines);
  EXPECT_TRUE(m.ok()) << m.status() << "\n" << job_lines;
  return m.ok() && !m->cells.empty() ? m->cells[0].job() : v1::JobSpec();
}

std::string OneError(const std::string& job_lines, const std::string& device = "null_blk") {
  absl::StatusOr<Matrix> m = Parse(job_lines, device);
  EXPECT_FALSE(m.ok()) << job_lines;
  if (m.ok()) return "";
  std::vector<std::string> lines = absl::StrSplit(std::string(m.status().message()), '\n');
  EXPECT_EQ(lines.size(), 1u) << m.status();
  return lines[0];
}

TEST(FioOptionsTest, AcceptedFormsAndWhatTheyStore) {
  EXPECT_TRUE(Good("  norandommap: 1\n").norandommap());
  // The no-op engine on a real device; fio's name for it, quoted (plain null is YAML's).
  EXPECT_EQ(Good("  ioengine: nop\n").ioengine(), v1::NOP);
  EXPECT_EQ(Good("  ioengine: \"null\"\n").ioengine(), v1::NOP);
  v1::JobSpec rr = Good("  randrepeat: 0\n");
  EXPECT_TRUE(rr.has_randrepeat());
  EXPECT_FALSE(rr.randrepeat());
  EXPECT_FALSE(Good("  bs: 4k\n").has_randrepeat());
  EXPECT_EQ(Good("  random_distribution: zipf:1.2\n").random_distribution(), "zipf:1.2");
  EXPECT_EQ(Good("  random_distribution: normal:10:0.25\n").random_distribution(),
            "normal:10:0.25");
  EXPECT_EQ(Good("  random_distribution: zoned:50/5:30/15:20/80\n").random_distribution(),
            "zoned:50/5:30/15:20/80");
  ResolvedJob zoned = *ResolveJobOrError(Good("  random_distribution: zoned:60/10:40/20\n"));
  EXPECT_EQ(zoned.distribution, RandomDist::kZoned);
  ASSERT_EQ(zoned.zones.size(), 2u);  // regions may add up to less than 100, as in fio
  EXPECT_EQ(zoned.zones[0].access_percent, 60u);
  EXPECT_EQ(zoned.zones[0].size_percent, 10u);
  EXPECT_EQ(zoned.zones[1].access_percent, 40u);
  EXPECT_EQ(zoned.zones[1].size_percent, 20u);
  EXPECT_FALSE(zoned.random_map);  // fio: a non-uniform distribution drops the map
  // fio's blank regions (examples/rand-zones.fio): a missing or 0 region shares what the
  // others leave, evenly (fio zone_split_ddir).
  ResolvedJob blank = *ResolveJobOrError(Good("  random_distribution: zoned:50/5:30/15:20/\n"));
  ASSERT_EQ(blank.zones.size(), 3u);
  EXPECT_EQ(blank.zones[2].size_percent, 80u);
  ResolvedJob two = *ResolveJobOrError(Good("  random_distribution: zoned:60/10:20:20/0\n"));
  ASSERT_EQ(two.zones.size(), 3u);
  EXPECT_EQ(two.zones[1].size_percent, 45u);
  EXPECT_EQ(two.zones[2].size_percent, 45u);
  EXPECT_EQ(ResolveJobOrError(Good("  random_distribution: zoned:100\n"))->zones[0].size_percent,
            100u);
  ResolvedJob abs = *ResolveJobOrError(Good("  random_distribution: zoned_abs:60/20g:40/100m\n"));
  EXPECT_EQ(abs.distribution, RandomDist::kZonedAbs);
  ASSERT_EQ(abs.zones.size(), 2u);
  EXPECT_EQ(abs.zones[0].size_bytes, 20ull << 30);
  EXPECT_EQ(abs.zones[1].size_bytes, 100ull << 20);

  v1::JobSpec split = Good("  bssplit: 4k/10:64k/90\n");
  ASSERT_EQ(split.bssplit_size(), 2);
  EXPECT_EQ(split.bssplit(0).bs(), 4096u);
  EXPECT_EQ(split.bssplit(0).percent(), 10u);
  EXPECT_EQ(split.bssplit(1).bs(), 65536u);
  EXPECT_EQ(split.bssplit(1).percent(), 90u);
  // fio: blank percentages share what the others leave.
  v1::JobSpec blanks = Good("  bssplit: 4k/50:1k/:32k/\n");
  ASSERT_EQ(blanks.bssplit_size(), 3);
  EXPECT_EQ(blanks.bssplit(1).percent(), 25u);
  EXPECT_EQ(blanks.bssplit(2).percent(), 25u);

  v1::JobSpec range = Good("  bsrange: 4k-64k\n");
  EXPECT_EQ(range.bs(), 4096u);
  EXPECT_EQ(range.bs_max(), 65536u);
  EXPECT_EQ(Good("  blocksize_range: 8k-16k\n").bs_max(), 16384u);

  // Per direction (fio's R,W[,T]): reads', then writes'; trims' is checked and unused.
  v1::JobSpec cmdprio = Good("  rw: randrw\n  bssplit: 64k/40:1024k/60,1024k/100\n");
  ASSERT_EQ(cmdprio.bssplit_size(), 2);
  ASSERT_EQ(cmdprio.write_bssplit_size(), 1);
  EXPECT_EQ(cmdprio.write_bssplit(0).bs(), 1024u << 10);
  ResolvedJob sized = *ResolveJobOrError(cmdprio);
  EXPECT_TRUE(sized.per_direction_bs());
  EXPECT_EQ(sized.sizes[0].min, 64u << 10);
  EXPECT_EQ(sized.sizes[0].max, 1024u << 10);
  EXPECT_EQ(sized.sizes[1].min, 1024u << 10);
  EXPECT_EQ(sized.sizes[1].split.size(), 1u);
  EXPECT_EQ(sized.bs, 64u << 10);
  EXPECT_EQ(sized.bs_max, 1024u << 10);
  EXPECT_EQ(Good("  bssplit: 4k/100,8k/100,16k/100\n").write_bssplit(0).bs(), 8192u);
  ResolvedJob bs_rw = *ResolveJobOrError(Good("  rw: randrw\n  bs: 4k,64k\n"));
  EXPECT_EQ(bs_rw.sizes[0].min, 4096u);
  EXPECT_EQ(bs_rw.sizes[1].min, 65536u);
  EXPECT_EQ(bs_rw.sizes[1].max, 65536u);
  EXPECT_TRUE(bs_rw.variable_bs());
  ResolvedJob default_reads = *ResolveJobOrError(Good("  bs: \",8k\"\n"));
  EXPECT_EQ(default_reads.sizes[0].min, 4096u);
  EXPECT_EQ(default_reads.sizes[1].min, 8192u);
  // The same sizes both ways are one set: nothing per direction.
  EXPECT_FALSE(ResolveJobOrError(Good("  bs: 8k,8k\n"))->per_direction_bs());
  ResolvedJob ranges = *ResolveJobOrError(Good("  bsrange: 4k-8k,16k-64k\n"));
  EXPECT_EQ(ranges.sizes[0].max, 8192u);
  EXPECT_EQ(ranges.sizes[1].min, 16384u);
  EXPECT_EQ(ranges.sizes[1].max, 65536u);
  // fio blockalign (ba): random offsets on its boundary; the random map is then off.
  ResolvedJob ba = *ResolveJobOrError(Good("  rw: randread\n  bs: 512\n  ba: 4k\n"));
  EXPECT_EQ(ba.sizes[0].align, 4096u);
  EXPECT_EQ(ba.sizes[0].min, 512u);
  EXPECT_FALSE(ba.random_map);
  EXPECT_EQ(ResolveJobOrError(Good("  rw: randread\n"))->sizes[0].align, 4096u);
  v1::JobSpec ba_rw = Good("  blockalign: 4k,8k\n");
  EXPECT_EQ(ba_rw.blockalign(), 4096u);
  EXPECT_EQ(ba_rw.write_blockalign(), 8192u);
  // A bssplit for every direction is the writes' too, whatever bs says (fio prefers it).
  ResolvedJob over = *ResolveJobOrError(Good("  bs: 4k,64k\n  bssplit: 8k/50:16k/50\n"));
  EXPECT_FALSE(over.per_direction_bs());
  EXPECT_EQ(over.sizes[1].split.size(), 2u);

  v1::JobSpec both = Good("  rate: 1m\n");
  EXPECT_EQ(both.rate_read_bps(), 1u << 20);
  EXPECT_EQ(both.rate_write_bps(), 1u << 20);
  v1::JobSpec rw = Good("  rate: 1m,500k\n");
  EXPECT_EQ(rw.rate_read_bps(), 1u << 20);
  EXPECT_EQ(rw.rate_write_bps(), 500u << 10);
  v1::JobSpec writes = Good("  rate: \",500k\"\n");
  EXPECT_EQ(writes.rate_read_bps(), 0u);
  EXPECT_EQ(writes.rate_write_bps(), 500u << 10);
  v1::JobSpec reads = Good("  rate: 500k,\n");
  EXPECT_EQ(reads.rate_read_bps(), 500u << 10);
  EXPECT_EQ(reads.rate_write_bps(), 0u);
  v1::JobSpec iops = Good("  rate_iops: 500,100\n  rate_process: poisson\n");
  EXPECT_EQ(iops.rate_iops_read(), 500u);
  EXPECT_EQ(iops.rate_iops_write(), 100u);
  EXPECT_EQ(iops.rate_process(), "poisson");

  // fio's default units: startdelay seconds, thinktime microseconds.
  EXPECT_EQ(Good("  startdelay: 2\n").startdelay_ns(), 2'000'000'000u);
  EXPECT_EQ(Good("  startdelay: 500ms\n").startdelay_ns(), 500'000'000u);
  v1::JobSpec think = Good("  thinktime: 100\n  thinktime_spin: 20us\n  thinktime_blocks: 4\n");
  EXPECT_EQ(think.thinktime_ns(), 100'000u);
  EXPECT_EQ(think.thinktime_spin_ns(), 20'000u);
  EXPECT_EQ(think.thinktime_blocks(), 4u);
  EXPECT_EQ(Good("  thinktime: 2ms\n").thinktime_ns(), 2'000'000u);

  EXPECT_EQ(Good("  nice: -5\n").nice(), -5);
  v1::JobSpec prio = Good("  prio: 0\n  prioclass: 1\n");
  EXPECT_TRUE(prio.has_prio());
  EXPECT_EQ(prio.prio(), 0u);
  EXPECT_EQ(prio.prioclass(), 1u);
  v1::JobSpec sync = Good("  rw: write\n  fsync: 32\n  end_fsync: 1\n");
  EXPECT_EQ(sync.fsync(), 32u);
  EXPECT_TRUE(sync.end_fsync());
  EXPECT_EQ(Good("  log_avg_msec: 250\n").log_avg_msec(), 250u);
  EXPECT_EQ(Good("  file_service_type: roundrobin:32\n").file_service_type(), "roundrobin:32");
  EXPECT_EQ(Good("  file_service_type: t/io_uring\n").file_service_type(), "t/io_uring");
  ResolvedJob fs = *ResolveJobOrError(Good("  file_service_type: random:4\n"));
  EXPECT_EQ(fs.file_service, FileService::kRandom);
  EXPECT_EQ(fs.file_service_nr, 4u);

  absl::StatusOr<Matrix> sched = Parse("  ioscheduler: bfq\n");
  ASSERT_TRUE(sched.ok()) << sched.status();
  EXPECT_EQ(sched->cells[0].queue().scheduler(), "bfq");
}

// Each bad form: FILE:LINE:COL, the key, and what was expected.
TEST(FioOptionsTest, BadFormsNameFileLineKeyAndExpected) {
  const struct {
    std::string line, error;
  } kCases[] = {
      {"  norandommap: maybe\n",
       "m.yaml:4:16: key 'norandommap': expected a boolean (0, 1, true or false), got 'maybe'"},
      {"  random_distribution: zipf:1\n",
       "m.yaml:4:24: key 'random_distribution': expected random, zipf:<theta>, pareto:<power> or "
       "normal:<deviation in percent>, each with an optional :<center from 0 to 1> (e.g. "
       "zipf:1.2), or zoned:<access %>/<region %>[:...] or zoned_abs:<access %>/<size>[:...] "
       "with the accesses adding up to 100 and zoned's regions to at most 100 (e.g. "
       "zoned:60/10:40/90; one zone list for reads and writes: fio's comma-separated "
       "per-direction form is not supported), got 'zipf:1'"},
      {"  random_distribution: zoned:60/10:30/90\n",
       "m.yaml:4:24: key 'random_distribution': expected random, zipf:<theta>, pareto:<power> or "
       "normal:<deviation in percent>, each with an optional :<center from 0 to 1> (e.g. "
       "zipf:1.2), or zoned:<access %>/<region %>[:...] or zoned_abs:<access %>/<size>[:...] "
       "with the accesses adding up to 100 and zoned's regions to at most 100 (e.g. "
       "zoned:60/10:40/90; one zone list for reads and writes: fio's comma-separated "
       "per-direction form is not supported), got 'zoned:60/10:30/90'"},
      {"  random_distribution: zoned:60/10:40/95\n",
       "m.yaml:4:24: key 'random_distribution': expected random, zipf:<theta>, pareto:<power> or "
       "normal:<deviation in percent>, each with an optional :<center from 0 to 1> (e.g. "
       "zipf:1.2), or zoned:<access %>/<region %>[:...] or zoned_abs:<access %>/<size>[:...] "
       "with the accesses adding up to 100 and zoned's regions to at most 100 (e.g. "
       "zoned:60/10:40/90; one zone list for reads and writes: fio's comma-separated "
       "per-direction form is not supported), got 'zoned:60/10:40/95'"},
      {"  random_distribution: zoned:60/10:40/90,100/100\n",
       "m.yaml:4:24: key 'random_distribution': expected random, zipf:<theta>, pareto:<power> or "
       "normal:<deviation in percent>, each with an optional :<center from 0 to 1> (e.g. "
       "zipf:1.2), or zoned:<access %>/<region %>[:...] or zoned_abs:<access %>/<size>[:...] "
       "with the accesses adding up to 100 and zoned's regions to at most 100 (e.g. "
       "zoned:60/10:40/90; one zone list for reads and writes: fio's comma-separated "
       "per-direction form is not supported), got 'zoned:60/10:40/90,100/100'"},
      {"  random_distribution: zoned_abs:60/1g:40/0\n",
       "m.yaml:4:24: key 'random_distribution': expected random, zipf:<theta>, pareto:<power> or "
       "normal:<deviation in percent>, each with an optional :<center from 0 to 1> (e.g. "
       "zipf:1.2), or zoned:<access %>/<region %>[:...] or zoned_abs:<access %>/<size>[:...] "
       "with the accesses adding up to 100 and zoned's regions to at most 100 (e.g. "
       "zoned:60/10:40/90; one zone list for reads and writes: fio's comma-separated "
       "per-direction form is not supported), got 'zoned_abs:60/1g:40/0'"},
      {"  random_distribution: zoned:50\n",
       "m.yaml:4:24: key 'random_distribution': expected random, zipf:<theta>, pareto:<power> or "
       "normal:<deviation in percent>, each with an optional :<center from 0 to 1> (e.g. "
       "zipf:1.2), or zoned:<access %>/<region %>[:...] or zoned_abs:<access %>/<size>[:...] "
       "with the accesses adding up to 100 and zoned's regions to at most 100 (e.g. "
       "zoned:60/10:40/90; one zone list for reads and writes: fio's comma-separated "
       "per-direction form is not supported), got 'zoned:50'"},
      {"  bssplit: 4k/10:64k/80\n",
       "m.yaml:4:12: key 'bssplit': expected block sizes with percentages as "
       "size/percent:size/percent adding up to 100, sizes multiples of 512 (e.g. 4k/10:64k/90), "
       "or one set per direction as reads,writes[,trims] (e.g. 64k/40:1024k/60,1024k/100), got "
       "'4k/10:64k/80'"},
      {"  bssplit: 4k/50:8k/50,16k/90\n",
       "m.yaml:4:12: key 'bssplit': expected block sizes with percentages as "
       "size/percent:size/percent adding up to 100, sizes multiples of 512 (e.g. 4k/10:64k/90), "
       "or one set per direction as reads,writes[,trims] (e.g. 64k/40:1024k/60,1024k/100), got "
       "'4k/50:8k/50,16k/90'"},
      {"  bssplit: 4k/100,\n",
       "m.yaml:4:12: key 'bssplit': expected block sizes with percentages as "
       "size/percent:size/percent adding up to 100, sizes multiples of 512 (e.g. 4k/10:64k/90), "
       "or one set per direction as reads,writes[,trims] (e.g. 64k/40:1024k/60,1024k/100), got "
       "'4k/100,'"},
      {"  bs: 4k,8k,16k,32k\n",
       "m.yaml:4:7: key 'bs': expected a size that is a multiple of 512 (e.g. 4k), or one per "
       "direction as reads,writes[,trims] (e.g. 4k,64k; an empty one is 4k), got "
       "'4k,8k,16k,32k'"},
      {"  bsrange: 4k-8k,16k\n",
       "m.yaml:4:12: key 'bsrange': expected a size range min-max, both multiples of 512 with "
       "min <= max (e.g. 4k-64k), or one per direction as reads,writes[,trims] (e.g. "
       "4k-8k,64k-128k), got '4k-8k,16k'"},
      {"  file_service_type: sequential\n",
       "m.yaml:4:22: key 'file_service_type': expected roundrobin or random, each with an "
       "optional :<I/Os before switching> (e.g. roundrobin:32), or t/io_uring (its rules), got "
       "'sequential'"},
      {"  file_service_type: roundrobin:0\n",
       "m.yaml:4:22: key 'file_service_type': expected roundrobin or random, each with an "
       "optional :<I/Os before switching> (e.g. roundrobin:32), or t/io_uring (its rules), got "
       "'roundrobin:0'"},
      {"  bsrange: 64k-4k\n",
       "m.yaml:4:12: key 'bsrange': expected a size range min-max, both multiples of 512 with "
       "min <= max (e.g. 4k-64k), or one per direction as reads,writes[,trims] (e.g. "
       "4k-8k,64k-128k), got '64k-4k'"},
      {"  rate: 1m,1m,1m\n",
       "m.yaml:4:9: key 'rate': expected a bandwidth cap in bytes/s per job as R[,W] with size "
       "suffixes (e.g. 1m, 1m,500k, ,500k; no trim rate), got '1m,1m,1m'"},
      {"  rate_iops: 5x\n",
       "m.yaml:4:14: key 'rate_iops': expected an IOPS cap per job as R[,W] integers (e.g. 500, "
       "500,100, ,100; no trim rate), got '5x'"},
      {"  rate_process: burst\n",
       "m.yaml:4:17: key 'rate_process': expected linear or poisson, got 'burst'"},
      {"  startdelay: 1-5\n",
       "m.yaml:4:15: key 'startdelay': expected a duration (e.g. 2s, 500ms; a bare number is "
       "seconds; a range is not supported), got '1-5'"},
      {"  thinktime: soon\n",
       "m.yaml:4:14: key 'thinktime': expected a duration (e.g. 100us, 2ms; a bare number is "
       "microseconds), got 'soon'"},
      {"  thinktime: 10\n  thinktime_spin: 5s\n",
       "m.yaml:5:19: key 'thinktime_spin': expected a duration up to 4s (e.g. 50us; a bare "
       "number is microseconds), got '5s'"},
      {"  nice: 20\n", "m.yaml:4:9: key 'nice': expected an integer from -20 to 19, got '20'"},
      {"  prio: 8\n", "m.yaml:4:9: key 'prio': expected an integer from 0 (highest) to 7, got '8'"},
      {"  prioclass: 4\n",
       "m.yaml:4:14: key 'prioclass': expected 1 (realtime), 2 (best-effort) or 3 (idle), got "
       "'4'"},
      {"  fsync: -1\n",
       "m.yaml:4:10: key 'fsync': expected an integer: fsync after every N writes (0 = never), "
       "got '-1'"},
      {"  log_avg_msec: 0\n",
       "m.yaml:4:17: key 'log_avg_msec': expected an interval in milliseconds from 1 to 3600000 "
       "(the run's sample interval), got '0'"},
      {"  write_bw_log: ../x\n",
       "m.yaml:4:17: key 'write_bw_log': expected a log file name prefix of letters, digits, "
       "'.', '_' and '-' (up to 100, not starting with '.'; \"\" = the job's name), got '../x'"},
      // fio's logs blkbench cannot write as fio does (common/log_options.h).
      {"  write_bw_log: bw\n",
       "m.yaml:4:17: write_bw_log without log_avg_msec: fio would log every I/O; blkbench keeps "
       "interval samples, not per-I/O records, so it writes fio's windowed log only: set "
       "log_avg_msec (e.g. 1000)"},
      {"  write_hist_log: h\n",
       "m.yaml:4:19: write_hist_log without log_hist_msec: fio writes an empty histogram log; "
       "set log_hist_msec (e.g. 1000)"},
      {"  log_avg_msec: 300\n  log_hist_msec: 1000\n",
       "m.yaml:5:18: log_hist_msec (1000) is not a multiple of log_avg_msec (300): blkbench cuts "
       "its samples every log_avg_msec and sums them into histogram log entries"},
      {"  ioengine: io_uring\n  log_avg_msec: 100\n  write_lat_log: l\n",
       "m.yaml:6:18: write_lat_log with ioengine io_uring: fio splits an asynchronous I/O's "
       "latency into slat and clat; blkbench times each I/O only from submission to completion, "
       "so it writes lat logs only for synchronous engines (psync, sync, ...), where fio's slat "
       "log is empty and clat is lat"},
      {"  numjobs: 2\n  log_avg_msec: 100\n  write_iops_log: i\n",
       "m.yaml:6:19: fio writes one log per job clone (numjobs 2); blkbench samples a job's "
       "clones together: use numjobs 1, or named jobs, for logs"},
      // Cross-key rules (common/resolved_job.h).
      {"  thinktime: 10\n  thinktime_spin: 20\n",
       "m.yaml:5:19: thinktime_spin (20000 ns) is longer than thinktime (10000 ns)"},
      // bs and bsrange set the same sizes: one of them.
      {"  bs: 4k\n  bsrange: 4k-8k\n",
       "m.yaml:5:3: key 'bsrange' sets the same option as 'bs' (job:, line 4); give only one of "
       "them"},
  };
  for (const auto& c : kCases) {
    EXPECT_EQ(OneError(c.line), c.error) << c.line;
  }
}

// A sim: cell runs on the engine: what its job loop does not model is an error there.
TEST(FioOptionsTest, SimCellsRejectWhatTheEngineDoesNotModel) {
  EXPECT_EQ(OneError("  nice: 5\n", "sim:null_blk"),
            "m.yaml:4:9: key 'nice' is not modelled by the engine (device_class "
            "'sim:null_blk'); it runs on real devices only");
  // The engine draws fio's zoned forms (engine/model/job.cc), not the other distributions.
  EXPECT_TRUE(Parse("  random_distribution: zoned:60/10:40/90\n", "sim:ssd").ok());
  EXPECT_EQ(OneError("  random_distribution: zipf:1.2\n", "sim:ssd"),
            "m.yaml:4:24: key 'random_distribution' is not modelled by the engine (device_class "
            "'sim:ssd'); it runs on real devices only");
  EXPECT_EQ(OneError("  rw: write\n  fsync: 8\n", "sim:ssd"),
            "m.yaml:5:10: key 'fsync' is not modelled by the engine (device_class 'sim:ssd'); it "
            "runs on real devices only");
  EXPECT_EQ(OneError("  ioengine: nop\n", "sim:ssd"),
            "m.yaml:4:13: ioengine nop issues no I/O, so a simulated device has nothing to time; "
            "it runs on real devices only (device_class 'sim:ssd')");
  // What the engine does model validates.
  for (const char* ok :
       {"  bssplit: 4k/50:64k/50\n", "  bsrange: 4k-16k\n", "  prioclass: 3\n",
        "  rate_iops: 500\n  rate_process: poisson\n", "  rate: 1m,\n",
        "  thinktime: 10\n  thinktime_blocks: 2\n", "  startdelay: 1s\n", "  norandommap: 1\n",
        "  randrepeat: 0\n", "  log_avg_msec: 100\n", "  ioscheduler: mq-deadline\n"}) {
    absl::StatusOr<Matrix> m = Parse(ok, "sim:null_blk");
    EXPECT_TRUE(m.ok()) << ok << m.status();
  }
}

// Runs `fio --parse-only` on a job file; true when fio is absent (nothing to check).
bool FioAcceptsJobFile(const std::string& text, std::string* why) {
  if (access("/usr/bin/fio", X_OK) != 0) return true;
  char path[] = "/tmp/fio_options_testXXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) return false;
  const bool wrote = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  close(fd);
  const std::string cmd = absl::StrCat("/usr/bin/fio --parse-only ", path, " 2>&1");
  *why = cmd;
  const int rc = wrote ? system(cmd.c_str()) : -1;
  unlink(path);
  return rc == 0;
}

// Job files as people write them import with every option carried over, validate, and are
// fio's own syntax.
TEST(FioOptionsTest, JobFilesWithTheseOptionsImportAndValidate) {
  const std::string kJobFile = R"([global]
filename=/dev/nvme0n1
ioengine=io_uring
direct=1
norandommap
randrepeat=0
ioscheduler=mq-deadline
log_avg_msec=500
write_bw_log=bw
percentile_list=50:99:99.9
verify=crc32c

[mixed]
rw=randrw
bssplit=4k/20:16k/30:64k/50
rate=100m,50m
rate_iops=2000
rate_process=poisson
random_distribution=zipf:1.2
startdelay=2
thinktime=50
thinktime_spin=10
thinktime_blocks=8
nice=5
prio=2
prioclass=2
fsync=64
end_fsync=1
cgroup=bench
cgroup_weight=300
runtime=10
time_based
)";
  absl::StatusOr<FioJobs> jobs = ParseFioJobFile(kJobFile, "real.fio");
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  absl::StatusOr<FioImport> imported =
      ImportFio(*jobs, {.source = "real.fio", .device_class = "nvme", .kernel = ""});
  ASSERT_TRUE(imported.ok()) << imported.status();
  EXPECT_EQ(imported->problems, "") << imported->yaml;
  absl::StatusOr<Matrix> m = ParseMatrix(imported->yaml, "imported.yaml");
  ASSERT_TRUE(m.ok()) << m.status() << "\n" << imported->yaml;
  ASSERT_EQ(m->cells.size(), 1u);
  const v1::CellSpec& cell = m->cells[0];
  const v1::JobSpec& j = cell.job();
  EXPECT_TRUE(j.norandommap());
  EXPECT_FALSE(j.randrepeat());
  EXPECT_EQ(j.bssplit_size(), 3);
  EXPECT_EQ(j.rate_read_bps(), 100u << 20);
  EXPECT_EQ(j.rate_write_bps(), 50u << 20);
  EXPECT_EQ(j.rate_iops_read(), 2000u);
  EXPECT_EQ(j.rate_process(), "poisson");
  EXPECT_EQ(j.random_distribution(), "zipf:1.2");
  EXPECT_EQ(j.startdelay_ns(), 2'000'000'000u);
  EXPECT_EQ(j.thinktime_ns(), 50'000u);
  EXPECT_EQ(j.thinktime_spin_ns(), 10'000u);
  EXPECT_EQ(j.thinktime_blocks(), 8u);
  EXPECT_EQ(j.nice(), 5);
  EXPECT_EQ(j.prio(), 2u);
  EXPECT_EQ(j.prioclass(), 2u);
  EXPECT_EQ(j.fsync(), 64u);
  EXPECT_TRUE(j.end_fsync());
  EXPECT_EQ(j.log_avg_msec(), 500u);
  EXPECT_EQ(cell.queue().scheduler(), "mq-deadline");
  EXPECT_EQ(cell.cgroup(), "one:300");
  const std::string& y = imported->yaml;
  EXPECT_EQ(j.write_bw_log(), "bw");  // fio's log files are written (docs/fio-logs.md)
  EXPECT_THAT(y, ::testing::Not(HasSubstr("# write_bw_log")));
  EXPECT_THAT(y, HasSubstr("# percentile_list=50:99:99.9  (real.fio:10): not carried over: "
                           "blkbench keeps the whole latency histogram"));
  EXPECT_THAT(y, HasSubstr("# verify=crc32c  (real.fio:11): not carried over: blkbench "
                           "measures I/O and does not verify written data"));
  std::string why;
  EXPECT_TRUE(FioAcceptsJobFile(kJobFile, &why)) << why;
}

// fio: bs and bsrange set the same sizes and the later one wins; the import keeps that one.
TEST(FioOptionsTest, ImportKeepsTheLaterOfBsAndBsrange) {
  absl::StatusOr<FioJobs> jobs = ParseFioJobFile("[j]\nbs=8k\nbsrange=4k-16k\n", "b.fio");
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  absl::StatusOr<FioImport> imported =
      ImportFio(*jobs, {.source = "b.fio", .device_class = "nvme", .kernel = ""});
  ASSERT_TRUE(imported.ok()) << imported.status();
  absl::StatusOr<Matrix> m = ParseMatrix(imported->yaml, "imported.yaml");
  ASSERT_TRUE(m.ok()) << m.status() << "\n" << imported->yaml;
  EXPECT_EQ(m->cells[0].job().bs(), 4096u);
  EXPECT_EQ(m->cells[0].job().bs_max(), 16384u);
  EXPECT_THAT(imported->yaml,
              HasSubstr("# bs=8k  (b.fio:2): not carried over: bsrange (b.fio:3) overrides it"));
  std::string why;
  EXPECT_TRUE(FioAcceptsJobFile("[j]\nfilename=/dev/null\nbs=8k\nbsrange=4k-16k\n", &why)) << why;
}

// The resolved job: what each option means to the executor and the engine.
TEST(FioOptionsTest, ResolvedJobCarriesFioSemantics) {
  v1::JobSpec s;
  s.set_rw(v1::RANDREAD);
  JobResolution plain = ResolveJob(s);
  ASSERT_TRUE(plain.problems.empty());
  EXPECT_TRUE(plain.job.random_map);  // fio's default: every block once per pass
  EXPECT_TRUE(plain.job.randrepeat);
  EXPECT_FALSE(plain.job.paced());

  s.set_random_distribution("pareto:0.3");
  JobResolution pareto = ResolveJob(s);
  EXPECT_FALSE(pareto.job.random_map);  // fio: a non-uniform distribution drops the map
  EXPECT_EQ(pareto.job.distribution, RandomDist::kPareto);
  EXPECT_DOUBLE_EQ(pareto.job.dist_param, 0.3);

  v1::JobSpec split;
  split.set_rw(v1::READ);
  testing::AddBsSplit(split.mutable_bssplit(), {{8192, 40}, {4096, 60}});
  JobResolution r = ResolveJob(split);
  ASSERT_TRUE(r.problems.empty());
  EXPECT_EQ(r.job.bs, 4096u);
  EXPECT_EQ(r.job.bs_max, 8192u);
  EXPECT_TRUE(r.job.variable_bs());

  v1::JobSpec prio;
  prio.set_prio(6);  // fio: prio alone is a best-effort level
  EXPECT_EQ(ResolveJob(prio).job.ioprio_class, kIoprioClassBe);
  EXPECT_EQ(ResolveJob(prio).job.ioprio_level, 6u);
  v1::JobSpec idle;
  idle.set_prioclass(kIoprioClassIdle);
  EXPECT_EQ(ResolveJob(idle).job.ioprio_class, kIoprioClassIdle);
  EXPECT_EQ(ResolveJob(idle).job.ioprio_level, 0u);

  v1::JobSpec bad;
  bad.set_rate_process("bursty");
  bad.set_random_distribution("zipf:0");
  std::vector<std::string> messages;
  for (const JobProblem& p : ResolveJob(bad).problems) messages.push_back(p.message);
  EXPECT_THAT(absl::StrJoin(messages, "\n"),
              HasSubstr("rate_process must be linear or poisson, got 'bursty'"));
  EXPECT_THAT(absl::StrJoin(messages, "\n"),
              HasSubstr("random_distribution 'zipf:0': expected zipf:<theta> with theta > 0"));

  // The zoned forms say which of fio's rules failed.
  const struct {
    std::string value, message;
  } kZoned[] = {
      {"zoned:60/10:30/90",
       "random_distribution 'zoned:60/10:30/90': expected zoned:<access %>/<region %>[:...], "
       "e.g. zoned:60/10:40/90 whose access percentages add up to 100 and region percentages "
       "to at most 100 (fio's rule; got 90 and 100)"},
      {"zoned:60/10:40/95",
       "random_distribution 'zoned:60/10:40/95': expected zoned:<access %>/<region %>[:...], "
       "e.g. zoned:60/10:40/90 whose access percentages add up to 100 and region percentages "
       "to at most 100 (fio's rule; got 100 and 105)"},
      {"zoned_abs:60/1g:30/2g",
       "random_distribution 'zoned_abs:60/1g:30/2g': expected zoned_abs:<access %>/<size>[:...], "
       "e.g. zoned_abs:60/20g:40/100g whose access percentages add up to 100 (fio's rule; got "
       "90)"},
      {"zoned:60/10:40/90,100/100",
       "random_distribution 'zoned:60/10:40/90,100/100': expected zoned:<access %>/<region "
       "%>[:...], e.g. zoned:60/10:40/90 (fio's per-direction zone lists, separated by ',', are "
       "not supported: give one list for reads and writes)"},
      {"zoned:60/x",
       "random_distribution 'zoned:60/x': expected zoned:<access %>/<region "
       "%>[:...], e.g. zoned:60/10:40/90"},
  };
  for (const auto& z : kZoned) {
    v1::JobSpec j;
    j.set_rw(v1::RANDREAD);
    j.set_random_distribution(z.value);
    const JobResolution zr = ResolveJob(j);
    ASSERT_EQ(zr.problems.size(), 1u) << z.value;
    EXPECT_EQ(zr.problems[0].message, z.message);
  }
}

}  // namespace
}  // namespace blkbench::workloads
