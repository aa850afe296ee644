// Tests for the per-job I/O generator: region, alignment, wrap-around, rwmix and
// determinism.
#include "agent/executor/offsets.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace blkbench {
namespace {

IoGeneratorConfig Config(bool random, uint32_t read_percent) {
  IoGeneratorConfig c;
  c.region_start = 3 * 4096;
  c.region_len = 16 * 4096 + 100;  // a partial block at the end is never used
  c.block_size = 4096;
  c.random = random;
  c.read_percent = read_percent;
  c.seed = 0x89;
  return c;
}

TEST(IoGenerator, RandomOffsetsAlignedInsideRegionAndRoughlyUniform) {
  IoGenerator g(Config(true, 100));
  std::map<uint64_t, int> hits;
  constexpr int kN = 160'000;
  for (int i = 0; i < kN; ++i) {
    const NextIo io = g.Next();
    ASSERT_FALSE(io.write);
    ASSERT_GE(io.offset, 3u * 4096);
    ASSERT_LE(io.offset + 4096, 3u * 4096 + 16 * 4096);
    ASSERT_EQ((io.offset - 3 * 4096) % 4096, 0u);
    hits[io.offset]++;
  }
  ASSERT_EQ(hits.size(), 16u);
  for (const auto& [off, n] : hits) {
    EXPECT_NEAR(n, kN / 16.0, kN / 160.0) << off;  // within 10 % of uniform
  }
}

TEST(IoGenerator, SameSeedSameSequenceOtherSeedDiffers) {
  IoGeneratorConfig c = Config(true, 50);
  IoGenerator a(c), b(c);
  c.seed += 1;
  IoGenerator other(c);
  int same_as_other = 0;
  for (int i = 0; i < 1000; ++i) {
    const NextIo x = a.Next(), y = b.Next(), z = other.Next();
    ASSERT_EQ(x.offset, y.offset);
    ASSERT_EQ(x.write, y.write);
    same_as_other += x.offset == z.offset && x.write == z.write;
  }
  EXPECT_LT(same_as_other, 200);
}

TEST(IoGenerator, SequentialWrapsAtRegionEnd) {
  IoGenerator g(Config(false, 100));
  for (int round = 0; round < 3; ++round) {
    for (uint64_t b = 0; b < 16; ++b) ASSERT_EQ(g.Next().offset, (3 + b) * 4096);
  }
}

TEST(IoGenerator, RwmixFractionAndPerDirectionSequentialPositions) {
  IoGenerator g(Config(false, 70));
  constexpr int kN = 100'000;
  int reads = 0;
  uint64_t expect[2] = {3 * 4096, 3 * 4096};
  for (int i = 0; i < kN; ++i) {
    const NextIo io = g.Next();
    reads += !io.write;
    ASSERT_EQ(io.offset, expect[io.write]);  // each direction advances on its own
    expect[io.write] += 4096;
    if (expect[io.write] == 19 * 4096) expect[io.write] = 3 * 4096;
  }
  EXPECT_NEAR(static_cast<double>(reads) / kN, 0.70, 0.01);
  IoGenerator writes_only(Config(true, 0));
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(writes_only.Next().write);
}

// fio's random map: a pass over the region's blocks touches each exactly once; the next
// pass is another order. An odd block count exercises the cycle walk.
TEST(IoGenerator, RandomMapCoversEveryBlockOncePerPass) {
  IoGeneratorConfig c = Config(true, 100);
  c.region_len = 1000 * 4096;
  c.random_map = true;
  IoGenerator g(c);
  std::vector<uint64_t> passes[3];
  for (auto& pass : passes) {
    std::set<uint64_t> seen;
    for (int i = 0; i < 1000; ++i) {
      const NextIo io = g.Next();
      ASSERT_EQ(io.len, 4096u);
      ASSERT_LT(io.offset, c.region_start + c.region_len);
      ASSERT_TRUE(seen.insert(io.offset).second) << "block repeated within a pass";
      pass.push_back(io.offset);
    }
    EXPECT_EQ(seen.size(), 1000u);
  }
  EXPECT_NE(passes[0], passes[1]);
  // Not a sequential walk in disguise: few neighbours are adjacent blocks.
  int adjacent = 0;
  for (size_t i = 1; i < passes[0].size(); ++i) {
    adjacent += passes[0][i] == passes[0][i - 1] + 4096;
  }
  EXPECT_LT(adjacent, 50);
  // norandommap draws with replacement: a pass-length draw repeats blocks (about 1/e of
  // the blocks are never hit).
  c.random_map = false;
  IoGenerator uniform(c);
  std::set<uint64_t> seen;
  for (int i = 0; i < 1000; ++i) seen.insert(uniform.Next().offset);
  EXPECT_LT(seen.size(), 700u);
  EXPECT_GT(seen.size(), 560u);
}

// Counts of each block index over n draws of `c`.
std::vector<int> Hits(IoGeneratorConfig c, int n) {
  IoGenerator g(c);
  std::vector<int> hits(c.region_len / c.block_size);
  for (int i = 0; i < n; ++i) ++hits[(g.Next().offset - c.region_start) / c.block_size];
  return hits;
}

// Share of all hits that land on the hottest `fraction` of the blocks.
double HotShare(std::vector<int> hits, double fraction) {
  std::sort(hits.rbegin(), hits.rend());
  const size_t top = static_cast<size_t>(hits.size() * fraction);
  double total = 0, hot = 0;
  for (size_t i = 0; i < hits.size(); ++i) {
    total += hits[i];
    if (i < top) hot += hits[i];
  }
  return hot / total;
}

// Share of all hits that land on the first `fraction` of the blocks.
double FirstShare(const std::vector<int>& hits, double fraction) {
  const size_t first = static_cast<size_t>(hits.size() * fraction);
  double total = 0, hot = 0;
  for (size_t i = 0; i < hits.size(); ++i) {
    total += hits[i];
    if (i < first) hot += hits[i];
  }
  return hot / total;
}

TEST(IoGenerator, ZipfAndParetoConcentrateOnFewBlocks) {
  IoGeneratorConfig c = Config(true, 100);
  c.region_len = 10000 * 4096;
  c.distribution = RandomDist::kZipf;
  c.dist_param = 1.2;
  c.zipf_zetan = ZipfZeta(10000, 1.2);
  // zipf 1.2 over 10k items: the top 1 % hold well over half of the probability mass
  // (sum_{i<=100} i^-1.2 / zeta(10000, 1.2) ~ 3.60 / 4.80 = 0.75).
  const std::vector<int> zipf = Hits(c, 200'000);
  EXPECT_NEAR(HotShare(zipf, 0.01), 0.75, 0.06);
  EXPECT_EQ(zipf, Hits(c, 200'000));  // deterministic from the seed
  // pareto 0.2 (fio's default) is the classic 80/20 over the ranks; hashed onto blocks
  // (as fio does) some ranks share a block, so the hottest 20 % of the blocks hold more
  // (fio 3.33: 0.887 over these 10k blocks). Uniform offsets: a fifth of the region gets a
  // fifth.
  c.distribution = RandomDist::kPareto;
  c.dist_param = 0.2;
  const double pareto = HotShare(Hits(c, 200'000), 0.2);
  EXPECT_GT(pareto, 0.8);
  EXPECT_LT(pareto, 0.95);
  c.distribution = RandomDist::kRandom;
  EXPECT_NEAR(FirstShare(Hits(c, 200'000), 0.2), 0.2, 0.01);
}

// Share of the offsets (bytes from the region's start) in each of fio's zoned zones, and
// anything past the last zone in one more slot.
std::vector<double> ZoneShares(const std::vector<uint64_t>& offsets, uint64_t region_len,
                               const std::vector<ZoneSplit>& zones) {
  std::vector<double> share(zones.size() + 1);
  for (const uint64_t off : offsets) {
    uint64_t bytes = 0, percent = 0;
    size_t z = 0;
    for (; z < zones.size(); ++z) {
      bytes += zones[z].size_bytes;
      percent += zones[z].size_percent;
      if (off < (bytes != 0 ? bytes : region_len * percent / 100)) break;
    }
    share[z] += 1.0 / static_cast<double>(offsets.size());
  }
  return share;
}

// Five standard deviations of a share p estimated from n draws: a correct generator fails
// this about once in 1.7 million checks.
double Bound(double p, size_t n) { return 5 * std::sqrt(p * (1 - p) / static_cast<double>(n)); }

// The I/Os fio 3.33 issues for `options` (its command-line options but the file, the
// engine, the seed and the log) with the null engine, in order, from its write_iolog (v3:
// time file action offset length); empty if fio failed.
std::vector<NextIo> FioIos(const std::string& options) {
  const std::string base = "/tmp/blkbench_fio_" + std::to_string(getpid());
  const std::string log = base + ".iolog";
  const std::string cmd = "fio --name=j --filename=" + base + ".dat --ioengine=null --randseed=7 " +
                          options + " --write_iolog=" + log + " --output=/dev/null";
  const int rc = std::system(cmd.c_str());
  std::vector<NextIo> ios;
  std::ifstream in(log);
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::string time, name, action;
    NextIo io{0, false, 0};
    if (fields >> time >> name >> action >> io.offset >> io.len &&
        (action == "read" || action == "write")) {
      io.write = action == "write";
      ios.push_back(io);
    }
  }
  unlink(log.c_str());
  if (rc != 0) ios.clear();
  return ios;
}

// The block hit counts fio 3.33 draws for `distribution` over `blocks` 4k blocks
// (norandommap, `n` reads); empty if fio failed.
std::vector<int> FioHits(const std::string& distribution, uint64_t blocks, uint64_t n) {
  const std::vector<NextIo> ios =
      FioIos("--size=" + std::to_string(blocks * 4096) + " --io_size=" + std::to_string(n * 4096) +
             " --rw=randread --bs=4k --norandommap --random_distribution=" + distribution);
  std::vector<int> hits(ios.empty() ? 0 : blocks);
  for (const NextIo& io : ios) ++hits[io.offset / 4096];
  return hits;
}

// fio's zipf, pareto and normal against the generator: the share of the hottest 1 % and
// 10 % of the blocks (where the hot blocks sit is a hash in both, so only the shape is
// compared). Each share is estimated from n draws; two estimates differ by at most five
// standard deviations of their difference, plus the upward bias of picking the top blocks
// by their counts, which both share (bounded here by 0.5 %).
TEST(IoGenerator, ZipfParetoNormalHotSharesMatchFios) {
  if (std::system("command -v fio >/dev/null 2>&1") != 0) GTEST_SKIP() << "fio is not installed";
  constexpr uint64_t kBlocks = 10000, kN = 200'000;
  const struct {
    std::string fio;
    RandomDist dist;
    double param;
  } kCases[] = {{"zipf:1.2", RandomDist::kZipf, 1.2},
                {"pareto:0.2", RandomDist::kPareto, 0.2},
                {"normal:10", RandomDist::kNormal, 10}};
  for (const auto& k : kCases) {
    SCOPED_TRACE(k.fio);
    const std::vector<int> fio = FioHits(k.fio, kBlocks, kN);
    ASSERT_EQ(fio.size(), kBlocks);
    IoGeneratorConfig c = Config(true, 100);
    c.region_start = 0;
    c.region_len = kBlocks * 4096;
    c.distribution = k.dist;
    c.dist_param = k.param;
    if (k.dist == RandomDist::kZipf) c.zipf_zetan = ZipfZeta(kBlocks, k.param);
    const std::vector<int> ours = Hits(c, static_cast<int>(kN));
    for (const double top : {0.01, 0.1}) {
      const double theirs = HotShare(fio, top), mine = HotShare(ours, top);
      const double bound = std::sqrt(2.0) * Bound(theirs, kN) + 0.005;
      EXPECT_NEAR(mine, theirs, bound) << "hottest " << top * 100 << " %";
    }
  }
}

// jesd219's zoned:50/5:30/15:20/80, a region of 10000 blocks (a multiple of 100, so the
// zone edges are exact).
const std::vector<ZoneSplit> kJesd219 = {{50, 5, 0}, {30, 15, 0}, {20, 80, 0}};

TEST(IoGenerator, ZonedSharesPerZoneAndUniformInsideEach) {
  IoGeneratorConfig c = Config(true, 100);
  c.region_len = 10000 * 4096;
  c.distribution = RandomDist::kZoned;
  c.zones = kJesd219;
  constexpr int kN = 200'000;
  const std::vector<int> hits = Hits(c, kN);
  EXPECT_EQ(hits, Hits(c, kN));  // deterministic from the seed
  std::vector<uint64_t> offsets;
  for (size_t b = 0; b < hits.size(); ++b) offsets.insert(offsets.end(), hits[b], b * 4096);
  const std::vector<double> share = ZoneShares(offsets, c.region_len, kJesd219);
  for (size_t z = 0; z < kJesd219.size(); ++z) {
    const double want = kJesd219[z].access_percent / 100.0;
    EXPECT_NEAR(share[z], want, Bound(want, kN)) << "zone " << z;
  }
  // Uniform inside a zone: each half of the first zone (250 blocks) gets half of its 50 %.
  const double first_half = FirstShare(hits, 0.025);
  EXPECT_NEAR(first_half, 0.25, Bound(0.25, kN));
  // Variable block sizes draw the same zones over the I/O positions.
  const BsShare split[] = {{4096, 50}, {8192, 50}};
  c.bssplit = split;
  c.bssplit_len = 2;
  IoGenerator g(c);
  std::vector<uint64_t> var;
  var.reserve(50'000);
  for (int i = 0; i < 50'000; ++i) var.push_back(g.Next().offset - c.region_start);
  const std::vector<double> vshare = ZoneShares(var, c.region_len, kJesd219);
  EXPECT_NEAR(vshare[0], 0.5, Bound(0.5, var.size()));
  EXPECT_NEAR(vshare[1], 0.3, Bound(0.3, var.size()));
}

// zoned_abs: sizes in bytes from the region's start; regions past the zones are never
// touched, and zone edges that are not block multiples round down as in fio.
TEST(IoGenerator, ZonedAbsStaysInsideItsZones) {
  IoGeneratorConfig c = Config(true, 100);
  c.region_len = 10000 * 4096;
  c.distribution = RandomDist::kZonedAbs;
  const std::vector<ZoneSplit> zones = {{70, 0, 1 << 20}, {30, 0, 3 << 20}};
  c.zones = zones;
  constexpr int kN = 100'000;
  IoGenerator g(c);
  std::vector<uint64_t> offsets;
  offsets.reserve(kN);
  for (int i = 0; i < kN; ++i) offsets.push_back(g.Next().offset - c.region_start);
  const std::vector<double> share = ZoneShares(offsets, c.region_len, zones);
  EXPECT_NEAR(share[0], 0.7, Bound(0.7, kN));
  EXPECT_NEAR(share[1], 0.3, Bound(0.3, kN));
  EXPECT_EQ(share[2], 0);  // nothing past 4 MiB
}

// fio 3.33 itself (its write_iolog records every offset) with jesd219's zones: fio's share of the
// accesses per zone and the executor's are both within Bound of the declared percentages.
TEST(IoGenerator, ZonedSharesMatchFios) {
  if (std::system("command -v fio >/dev/null 2>&1") != 0) GTEST_SKIP() << "fio is not installed";
  constexpr uint64_t kSize = 40 << 20;  // 10240 blocks: the zone edges are whole blocks
  std::vector<uint64_t> fio;
  for (const NextIo& io : FioIos("--size=40m --io_size=80m --rw=randread --bs=4k "
                                 "--random_distribution=zoned:50/5:30/15:20/80")) {
    fio.push_back(io.offset);
  }
  ASSERT_EQ(fio.size(), 20480u);  // io_size / bs

  IoGeneratorConfig c = Config(true, 100);
  c.region_start = 0;
  c.region_len = kSize;
  c.distribution = RandomDist::kZoned;
  c.zones = kJesd219;
  IoGenerator g(c);
  std::vector<uint64_t> ours;
  for (size_t i = 0; i < fio.size(); ++i) ours.push_back(g.Next().offset);

  const std::vector<double> fio_share = ZoneShares(fio, kSize, kJesd219);
  const std::vector<double> our_share = ZoneShares(ours, kSize, kJesd219);
  for (size_t z = 0; z < kJesd219.size(); ++z) {
    const double want = kJesd219[z].access_percent / 100.0;
    EXPECT_NEAR(fio_share[z], want, Bound(want, fio.size())) << "fio, zone " << z;
    EXPECT_NEAR(our_share[z], want, Bound(want, ours.size())) << "blkbench, zone " << z;
  }
}

// What one run of I/Os looks like, for comparing with fio: the share of reads, of reads at
// the smaller size, and whether every I/O is aligned to its direction's smallest size and
// writes are all of the writes' size.
struct DirectionMix {
  size_t n = 0, reads = 0, small_reads = 0;
  bool aligned = true, writes_whole = true;
};

DirectionMix Mix(const std::vector<NextIo>& ios, uint64_t small, uint64_t read_unit,
                 uint64_t write_len) {
  DirectionMix m;
  for (const NextIo& io : ios) {
    ++m.n;
    if (io.write) {
      m.aligned &= io.offset % write_len == 0;
      m.writes_whole &= io.len == write_len;
    } else {
      ++m.reads;
      m.small_reads += io.len == small;
      m.aligned &= io.offset % read_unit == 0;
    }
  }
  return m;
}

// fio's examples/cmdprio-bssplit.fio's sizes, bssplit=64k/40:1024k/60,1024k/100: reads
// split 40/60 between 64k and 1m and sit on 64k boundaries, writes are all 1m on 1m
// boundaries. fio 3.33's write_iolog (null engine, norandommap: fio's random map trims
// I/Os to the blocks a pass has left) against the generator, same I/O count.
TEST(IoGenerator, PerDirectionBssplitMatchesFios) {
  if (std::system("command -v fio >/dev/null 2>&1") != 0) GTEST_SKIP() << "fio is not installed";
  std::vector<NextIo> fio = FioIos(
      "--size=1g --io_size=8g --rw=randrw --norandommap --bssplit=64k/40:1024k/60,1024k/100");
  ASSERT_GT(fio.size(), 5000u);  // 8 GiB at about 830 KiB per I/O

  const BsShare reads[] = {{64 << 10, 40}, {1 << 20, 60}};
  const BsShare writes[] = {{1 << 20, 100}};
  IoGeneratorConfig c = Config(true, 50);
  c.region_start = 0;
  c.region_len = 1 << 30;
  c.block_size = 64 << 10;
  c.bs_max = 1 << 20;
  c.bssplit = reads;
  c.bssplit_len = 2;
  c.write_block_size = 1 << 20;
  c.write_bs_max = 1 << 20;
  c.write_bssplit = writes;
  c.write_bssplit_len = 1;
  IoGenerator g(c);
  std::vector<NextIo> ours;
  for (size_t i = 0; i < fio.size(); ++i) ours.push_back(g.Next());

  for (const auto& [who, ios] : {std::pair{"fio", &fio}, std::pair{"blkbench", &ours}}) {
    SCOPED_TRACE(who);
    const DirectionMix m = Mix(*ios, 64 << 10, 64 << 10, 1 << 20);
    EXPECT_TRUE(m.aligned);
    EXPECT_TRUE(m.writes_whole);
    const double read_share = static_cast<double>(m.reads) / static_cast<double>(m.n);
    EXPECT_NEAR(read_share, 0.5, Bound(0.5, m.n));
    const double small = static_cast<double>(m.small_reads) / static_cast<double>(m.reads);
    EXPECT_NEAR(small, 0.4, Bound(0.4, m.reads));
    ASSERT_TRUE(std::all_of(ios->begin(), ios->end(), [](const NextIo& io) {
      return io.offset + io.len <= (uint64_t{1} << 30);
    }));
  }
}

// fio's examples/jesd219.fio, the JEDEC SSD endurance workload: bssplit from 512 bytes to
// 64k (4k: 67 %), blockalign=4k, rwmixread=40 and zoned:50/5:30/15:20/80, drawn by fio
// 3.33 (write_iolog, null engine) and by the generator, same I/O count: every offset on a
// 4k boundary, the 4k share, the reads' share and each zone's share agree.
TEST(IoGenerator, Jesd219MatchesFios) {
  if (std::system("command -v fio >/dev/null 2>&1") != 0) GTEST_SKIP() << "fio is not installed";
  const std::string split =
      "512/4:1024/1:1536/1:2048/1:2560/1:3072/1:3584/1:4k/67:8k/10:16k/7:32k/3:64k/3";
  constexpr uint64_t kSize = 400 << 20;  // a multiple of 100 blocks: whole zone edges
  std::vector<NextIo> fio = FioIos(
      "--size=400m --io_size=200m --rw=randrw --rwmixread=40 --norandommap --bssplit=" + split +
      " --blockalign=4k --random_distribution=zoned:50/5:30/15:20/80");
  ASSERT_GT(fio.size(), 10000u);

  const std::vector<BsShare> shares = {{512, 4},   {1024, 1},  {1536, 1},  {2048, 1},
                                       {2560, 1},  {3072, 1},  {3584, 1},  {4096, 67},
                                       {8192, 10}, {16384, 7}, {32768, 3}, {65536, 3}};
  IoGeneratorConfig c = Config(true, 40);
  c.region_start = 0;
  c.region_len = kSize;
  c.block_size = 512;
  c.bs_max = 65536;
  c.bssplit = shares.data();
  c.bssplit_len = static_cast<uint32_t>(shares.size());
  c.block_align = 4096;
  c.distribution = RandomDist::kZoned;
  c.zones = kJesd219;
  IoGenerator g(c);
  std::vector<NextIo> ours;
  for (size_t i = 0; i < fio.size(); ++i) ours.push_back(g.Next());

  for (const auto& [who, ios] : {std::pair{"fio", &fio}, std::pair{"blkbench", &ours}}) {
    SCOPED_TRACE(who);
    size_t reads = 0, four_k = 0;
    std::vector<uint64_t> offsets;
    for (const NextIo& io : *ios) {
      ASSERT_EQ(io.offset % 4096, 0u) << io.offset;
      ASSERT_LE(io.offset + io.len, kSize);
      reads += !io.write;
      four_k += io.len == 4096;
      offsets.push_back(io.offset);
    }
    const size_t n = ios->size();
    EXPECT_NEAR(static_cast<double>(reads) / static_cast<double>(n), 0.4, Bound(0.4, n));
    EXPECT_NEAR(static_cast<double>(four_k) / static_cast<double>(n), 0.67, Bound(0.67, n));
    const std::vector<double> zone = ZoneShares(offsets, kSize, kJesd219);
    for (size_t z = 0; z < kJesd219.size(); ++z) {
      const double want = kJesd219[z].access_percent / 100.0;
      EXPECT_NEAR(zone[z], want, Bound(want, n)) << "zone " << z;
    }
  }
}

// bs=4k,64k: reads of 4k on 4k boundaries, writes of 64k on 64k boundaries, as fio's log.
TEST(IoGenerator, PerDirectionBsMatchesFios) {
  if (std::system("command -v fio >/dev/null 2>&1") != 0) GTEST_SKIP() << "fio is not installed";
  const std::vector<NextIo> fio =
      FioIos("--size=64m --io_size=128m --rw=randrw --norandommap --bs=4k,64k");
  ASSERT_GT(fio.size(), 1000u);
  const DirectionMix theirs = Mix(fio, 4096, 4096, 65536);
  EXPECT_TRUE(theirs.aligned);
  EXPECT_TRUE(theirs.writes_whole);
  EXPECT_EQ(theirs.small_reads, theirs.reads);

  IoGeneratorConfig c = Config(true, 50);
  c.region_start = 0;
  c.region_len = 64 << 20;
  c.write_block_size = 65536;
  IoGenerator g(c);
  std::vector<NextIo> ours;
  for (size_t i = 0; i < fio.size(); ++i) ours.push_back(g.Next());
  const DirectionMix m = Mix(ours, 4096, 4096, 65536);
  EXPECT_TRUE(m.aligned);
  EXPECT_TRUE(m.writes_whole);
  EXPECT_EQ(m.small_reads, m.reads);
  const double n = static_cast<double>(m.n);
  EXPECT_NEAR(static_cast<double>(m.reads) / n, 0.5, Bound(0.5, m.n));
  EXPECT_NEAR(static_cast<double>(theirs.reads) / n, 0.5, Bound(0.5, m.n));
}

// fio 3.33's center (zipf:1.2:C, normal:10:C) is the rand_off added to the hashed value
// before the modulo: n * C for zipf (in place of a random one), n * (C - 0.5) for normal
// (0 without a center). So the same draws give the histogram rotated, the hot blocks
// still scattered (lib/zipf.c, lib/gauss.c).
TEST(IoGenerator, ACenterRotatesTheScatteredHotBlocksAsFiosDoes) {
  constexpr int kBlocks = 10000;
  IoGeneratorConfig c = Config(true, 100);
  c.region_start = 0;
  c.region_len = kBlocks * 4096;
  c.distribution = RandomDist::kZipf;
  c.dist_param = 1.2;
  c.zipf_zetan = ZipfZeta(kBlocks, 1.2);
  c.dist_center = 0.5;
  const std::vector<int> half = Hits(c, 20'000);
  c.dist_center = 0.75;
  const std::vector<int> three_quarters = Hits(c, 20'000);
  c.distribution = RandomDist::kNormal;
  c.dist_param = 10;
  c.dist_center = -1;
  const std::vector<int> normal = Hits(c, 20'000);
  c.dist_center = 0.25;
  const std::vector<int> normal_quarter = Hits(c, 20'000);
  for (int b = 0; b < kBlocks; ++b) {
    ASSERT_EQ(three_quarters[(b + 2500) % kBlocks], half[b]) << "zipf, block " << b;
    ASSERT_EQ(normal_quarter[(b + kBlocks - 2500) % kBlocks], normal[b]) << "normal, block " << b;
  }
}

TEST(IoGenerator, BssplitAndBsrangeSizes) {
  const BsShare split[] = {{4096, 25}, {16384, 75}};
  IoGeneratorConfig c = Config(true, 100);
  c.region_len = 1000 * 4096;
  c.bssplit = split;
  c.bssplit_len = 2;
  c.bs_max = 16384;
  IoGenerator g(c);
  constexpr int kN = 40'000;
  int small = 0;
  for (int i = 0; i < kN; ++i) {
    const NextIo io = g.Next();
    ASSERT_TRUE(io.len == 4096 || io.len == 16384) << io.len;
    ASSERT_EQ((io.offset - c.region_start) % 4096, 0u);
    ASSERT_LE(io.offset + io.len, c.region_start + c.region_len);
    small += io.len == 4096;
  }
  // Binomial: 5 standard deviations of the 25 % share.
  EXPECT_NEAR(static_cast<double>(small) / kN, 0.25, 5 * std::sqrt(0.25 * 0.75 / kN));

  IoGeneratorConfig r = Config(false, 100);
  r.region_len = 1000 * 4096 + 100;
  r.bs_max = 16384;
  IoGenerator range(r);
  std::map<uint32_t, int> sizes;
  uint64_t expect = r.region_start;
  for (int i = 0; i < kN; ++i) {
    const NextIo io = range.Next();
    if (io.offset != expect) {
      ASSERT_EQ(io.offset, r.region_start);  // wrapped: the next one would cross the end
      ASSERT_GT(expect + io.len, r.region_start + 1000 * 4096);
    }
    ASSERT_LE(io.offset + io.len, r.region_start + r.region_len);
    expect = io.offset + io.len;
    ++sizes[io.len];
  }
  ASSERT_EQ(sizes.size(), 4u);  // 4k, 8k, 12k, 16k: multiples of the minimum
  for (const auto& [len, n] : sizes) {
    EXPECT_EQ(len % 4096, 0u);
    EXPECT_NEAR(static_cast<double>(n) / kN, 0.25, 5 * std::sqrt(0.25 * 0.75 / kN)) << len;
  }
}

TEST(Rng, UniformStaysBelow) {
  Rng r(1);
  for (uint64_t n : {1ull, 2ull, 3ull, 1000ull, 1ull << 40}) {
    for (int i = 0; i < 1000; ++i) ASSERT_LT(r.Uniform(n), n);
  }
}

}  // namespace
}  // namespace blkbench
