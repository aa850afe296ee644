// `blkbench gate-proof` (gate_proof_cmd.h): synthetic tables from controller/gate's
// SimulateSynthetic, engine tables from pools of seeded sim:ssd runs.
#include "cli/gate_proof_cmd.h"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "agent/cell/sim_device.h"
#include "cli/command_registry.h"
#include "cli/gate_proof_models.h"
#include "controller/gate/gate_proof.h"
#include "controller/gate/rng.h"
#include "controller/gate/robust.h"
#include "engine/model/engine_runner.h"
#include "workloads/matrix.h"

namespace blkbench {
namespace {

constexpr char kBegin[] = "<!-- gate-proof:begin -->";
constexpr char kEnd[] = "<!-- gate-proof:end -->";
constexpr uint64_t kSeed = 20240605;

// The engine workload: a flash drive with 64 dies chosen at random per page, so repeats
// with different seeds differ by die collisions; 4 ms of simulated I/O per run gives
// ~1 % run-to-run noise, about what a real NVMe drive shows over short runs.
constexpr char kEngineMatrix[] = R"(name: gate-proof
repeats: 1
job: {rw: randread, ioengine: io_uring, runtime: 4ms, time_based: 1}
matrix:
  bs: [4k, 16k]
  iodepth: [4, 8, 16, 32]
target: {device_class: sim:ssd, kernel: sim:6.16}
)";
constexpr double kSsdReadUs = 75;  // SsdNvmePreset read_us and fixed_us
constexpr double kSsdFixedUs = 10;

std::string Pct(double x) {
  char buf[32];
  if (x > 0 && x < 0.001) return "<0.1 %";
  std::snprintf(buf, sizeof buf, "%.1f %%", 100 * x);
  return buf;
}

std::string Row(const std::vector<std::string>& cells) {
  std::string out = "|";
  for (const std::string& c : cells) absl::StrAppend(&out, " ", c, " |");
  return out + "\n";
}

std::string Header(const std::vector<std::string>& cells) {
  std::string out = Row(cells) + "|";
  for (size_t i = 0; i < cells.size(); ++i) out += "---|";
  return out + "\n";
}

// Runs of one engine cell under one condition, by seed: IOPS.
class EnginePools {
 public:
  EnginePools(std::vector<v1::CellSpec> cells, int pool) : cells_(std::move(cells)), pool_(pool) {}

  // IOPS of `pool_` runs of `cell` with the device `slowdown` slower (latency x
  // 1/(1 - slowdown)), seeds starting at `first_seed`.
  absl::StatusOr<const std::vector<double>*> Pool(int cell, double slowdown, uint64_t first_seed) {
    const auto key = std::make_tuple(cell, slowdown, first_seed);
    if (auto it = pools_.find(key); it != pools_.end()) return &it->second;
    v1::CellSpec spec = cells_[static_cast<size_t>(cell)];
    const double scale = 1.0 / (1.0 - slowdown);
    (*spec.mutable_device_params())["ssd.read_us"] = absl::StrCat(kSsdReadUs * scale);
    (*spec.mutable_device_params())["ssd.fixed_us"] = absl::StrCat(kSsdFixedUs * scale);
    std::vector<double> iops;
    spec.mutable_job()->set_randseed(first_seed);
    for (int i = 0; i < pool_; ++i) {
      // Repeat i: seed first_seed + i (CellForRepeat), on the agent's sim: device.
      CellRun run;
      run.cell = spec;
      run.repeat = static_cast<uint32_t>(i);
      run.device = spec.target().device_class();
      absl::StatusOr<v1::RunResult> r = RunCell(run, sim_device_, *runner_);
      if (!r.ok()) return r.status();
      iops.push_back(r->iops());
      ++runs_;
    }
    return &(pools_[key] = std::move(iops));
  }
  int cells() const { return static_cast<int>(cells_.size()); }
  int runs() const { return runs_; }

 private:
  std::vector<v1::CellSpec> cells_;
  int pool_;
  int runs_ = 0;
  std::unique_ptr<Runner> runner_ = engine::NewEngineRunner();
  SimulatedDevicePreparation sim_device_;
  std::map<std::tuple<int, double, uint64_t>, std::vector<double>> pools_;
};

// n distinct draws from a pool (partial Fisher-Yates with a seeded stream).
std::vector<double> Draw(const std::vector<double>& pool, int n, uint64_t seed) {
  std::vector<double> p = pool;
  gate::Rng rng(seed);
  std::vector<double> out;
  for (int i = 0; i < n && i < static_cast<int>(p.size()); ++i) {
    const size_t j = static_cast<size_t>(i) + rng.Uniform(p.size() - static_cast<size_t>(i));
    std::swap(p[static_cast<size_t>(i)], p[j]);
    out.push_back(p[static_cast<size_t>(i)]);
  }
  return out;
}

std::string SyntheticTables(int trials) {
  using gate::NoiseShape;
  using gate::SimulateSynthetic;
  using gate::SyntheticScenario;
  const gate::GateOptions defaults;
  std::string out = absl::StrCat(
      "#### Synthetic repeats, normal noise, defaults\n\n"
      "Each entry: share of cells called a regression, over ",
      trials,
      " seeded experiments of 20 "
      "cells (",
      trials * 20,
      " cells) sharing one noise prior; every cell judged on its own p "
      "(no help from Benjamini-Hochberg). The true change is of a higher-is-better metric.\n\n");
  out += Header(
      {"repeats per side", "noise (CV)", "false alarms (no change)", "-2 %", "-5 %", "-10 %"});
  for (int n : {3, 5, 10}) {
    for (double cv : {0.01, 0.02, 0.05}) {
      std::vector<std::string> row = {absl::StrCat(n), absl::StrCat(cv * 100, " %")};
      for (double change : {0.0, -0.02, -0.05, -0.10}) {
        SyntheticScenario s;
        s.repeats = n;
        s.cv = cv;
        s.change = change;
        const gate::VerdictRates r = SimulateSynthetic(
            s, defaults, trials, kSeed + static_cast<uint64_t>(n * 100 + cv * 1000));
        std::string cell = Pct(r.regression);
        if (n == 5 && cv == 0.02 && (change == 0.0 || change == -0.05)) {
          cell = absl::StrCat("**", cell, "**");
        }
        row.push_back(cell);
      }
      out += Row(row);
    }
  }

  out += absl::StrCat(
      "\n#### Robustness at 5 repeats, 2 % CV\n\n"
      "Same experiments, other noise shapes and methods (",
      trials * 20, " cells each).\n\n");
  out += Header({"noise / method", "false alarms", "power at -5 %", "no change called at 0 %"});
  struct Variant {
    std::string name;
    NoiseShape shape;
    gate::GateOptions opts;
    int cells;
  };
  gate::GateOptions rank = defaults;
  rank.method = gate::Method::kRankSum;
  gate::GateOptions rank05 = rank;
  rank05.alpha = 0.05;
  gate::GateOptions strict_check = defaults;
  strict_check.rank_check_alpha = 0.1;
  gate::GateOptions moderated = defaults;
  moderated.method = gate::Method::kModeratedT;
  const std::vector<Variant> variants = {
      {"normal, robust Welch (default)", NoiseShape::kNormal, defaults, 20},
      {"heavy-tailed (t3), robust Welch", NoiseShape::kHeavyTailed, defaults, 20},
      {"10 % slow outliers (5 cv), robust Welch", NoiseShape::kOutliers, defaults, 20},
      {"heteroscedastic (9x, candidate 1.5x), robust Welch", NoiseShape::kHeteroscedastic, defaults,
       20},
      {"normal, moderated t (before)", NoiseShape::kNormal, moderated, 20},
      {"10 % slow outliers (5 cv), moderated t", NoiseShape::kOutliers, moderated, 20},
      {"heteroscedastic (9x, candidate 1.5x), moderated t", NoiseShape::kHeteroscedastic, moderated,
       20},
      {"normal, rank check at 0.1", NoiseShape::kNormal, strict_check, 20},
      {"normal, t-test without pooling (1 cell)", NoiseShape::kNormal, defaults, 1},
      {"normal, rank-sum only, alpha 0.02", NoiseShape::kNormal, rank, 20},
      {"normal, rank-sum only, alpha 0.05 (before)", NoiseShape::kNormal, rank05, 20},
      {"heavy-tailed (t3), rank-sum only, alpha 0.05", NoiseShape::kHeavyTailed, rank05, 20},
  };
  for (size_t i = 0; i < variants.size(); ++i) {
    const Variant& v = variants[i];
    SyntheticScenario s;
    s.shape = v.shape;
    s.cells = v.cells;
    const int t = trials * 20 / v.cells;
    const gate::VerdictRates null = SimulateSynthetic(s, v.opts, t, kSeed + 1000 + i);
    s.change = -0.05;
    const gate::VerdictRates five = SimulateSynthetic(s, v.opts, t, kSeed + 2000 + i);
    out += Row({v.name, Pct(null.regression), Pct(five.regression), Pct(null.no_change)});
  }

  out += "\n#### Multiplicity: 20 cells, Benjamini-Hochberg across them, 5 repeats, 2 % CV\n\n";
  out += Header(
      {"cells with a -5 % change", "power on those cells", "false alarms on the unchanged cells"});
  for (int changed : {1, 5, 20}) {
    SyntheticScenario s;
    s.change = -0.05;
    s.fdr = true;
    s.changed_cells = changed;
    const gate::VerdictRates p = SimulateSynthetic(s, defaults, trials, kSeed + 3000 + changed);
    const std::string fa = changed < 20 ? Pct(p.unchanged_regression) : "-";
    out += Row({absl::StrCat(changed, " of 20"), Pct(p.regression), fa});
  }
  return out;
}

absl::StatusOr<std::string> EngineTables(int trials, int pool, std::ostream& err) {
  absl::StatusOr<workloads::Matrix> m = workloads::ParseMatrix(kEngineMatrix, "gate-proof");
  if (!m.ok()) return m.status();
  EnginePools pools(m->cells, pool);
  const auto start = std::chrono::steady_clock::now();
  // Baseline pool: seeds 1..; candidate pools: seeds 100001.., so "no change" compares
  // the same device with different seeds.
  constexpr uint64_t kBaseSeeds = 1, kCandSeeds = 100001;
  std::string out = absl::StrCat(
      "#### Engine runs (sim:ssd, randread, bs 4k/16k x iodepth 4-32 = 8 cells)\n\n"
      "Each cell has a pool of ",
      pool,
      " seeded runs per condition (4 ms simulated each); the "
      "slowdown is injected by scaling the drive's read and fixed latency. A trial draws the "
      "repeats of both sides from the pools without replacement, seeds differing; ",
      trials,
      " trials of 8 cells per entry. Realized change: the mean IOPS of the candidate "
      "pool over the baseline pool, averaged over cells.\n\n");
  // The measured noise.
  std::vector<double> cvs;
  for (int c = 0; c < pools.cells(); ++c) {
    auto p = pools.Pool(c, 0.0, kBaseSeeds);
    if (!p.ok()) return p.status();
    cvs.push_back(gate::Cv(**p));
  }
  absl::StrAppend(&out, "Run-to-run IOPS noise of the cells (CV): ",
                  Pct(*std::min_element(cvs.begin(), cvs.end())), " to ",
                  Pct(*std::max_element(cvs.begin(), cvs.end())), ", median ",
                  Pct(gate::Median(cvs)), ".\n\n");
  out += Header({"repeats per side", "injected slowdown", "realized IOPS change",
                 "called a regression", "called no change"});
  for (double slowdown : {0.0, 0.02, 0.05, 0.10}) {
    double realized = 0;
    for (int c = 0; c < pools.cells(); ++c) {
      auto b = pools.Pool(c, 0.0, kBaseSeeds);
      auto k = pools.Pool(c, slowdown, kCandSeeds);
      if (!b.ok()) return b.status();
      if (!k.ok()) return k.status();
      realized += gate::Mean(**k) / gate::Mean(**b) - 1;
    }
    realized /= pools.cells();
    for (int n : {3, 5, 10}) {
      absl::Status failed;
      gate::SampleSource draw = [&](int cell, bool changed, int count, uint64_t seed) {
        auto p =
            changed ? pools.Pool(cell, slowdown, kCandSeeds) : pools.Pool(cell, 0.0, kBaseSeeds);
        if (!p.ok()) {
          failed = p.status();
          return std::vector<double>();
        }
        return Draw(**p, count, seed);
      };
      const gate::VerdictRates r = gate::SimulateFromSource(
          draw, pools.cells(), n, gate::GateOptions(), trials,
          kSeed + static_cast<uint64_t>(slowdown * 1000) * 10 + static_cast<uint64_t>(n));
      if (!failed.ok()) return failed;
      char real[32];
      std::snprintf(real, sizeof real, "%+.1f %%", 100 * realized);
      out +=
          Row({absl::StrCat(n), slowdown == 0 ? "none (other seeds)" : Pct(slowdown) + " latency",
               real, Pct(r.regression), Pct(r.no_change)});
    }
  }
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  err << "gate-proof: " << pools.runs() << " engine runs in " << secs << " s\n";
  return out;
}

bool Replace(const std::string& path, const std::string& section, std::ostream& err) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string doc = ss.str();
  const size_t b = doc.find(kBegin);
  const size_t e = doc.find(kEnd);
  if (!in || b == std::string::npos || e == std::string::npos || e < b) {
    err << "blkbench gate-proof: " << path << " has no " << kBegin << " ... " << kEnd
        << " section\n";
    return false;
  }
  doc = absl::StrCat(doc.substr(0, b + sizeof(kBegin) - 1), "\n", section, doc.substr(e));
  std::ofstream o(path);
  o << doc;
  if (!o) {
    err << "blkbench gate-proof: cannot write " << path << "\n";
    return false;
  }
  return true;
}

}  // namespace

int RunGateProof(const Args& a, std::ostream& out, std::ostream& err) {
  if (a.flags.count("fit")) return RunFit(a.flags.at("fit"), out, err);
  absl::StatusOr<std::optional<gate::NoiseModel>> model = NoiseModelFromFlags(a);
  if (!model.ok()) {
    err << "blkbench gate-proof: " << model.status().message() << "\n";
    return 2;
  }
  if (model->has_value()) return RunModelReport(a, **model, out, err);
  const bool quick = a.flags.count("quick") > 0;
  int trials = quick ? 100 : 500;
  if (a.flags.count("trials") && (!absl::SimpleAtoi(a.flags.at("trials"), &trials) || trials < 1)) {
    err << "blkbench gate-proof: --trials: expected a positive number\n";
    return 2;
  }
  const int pool = quick ? 30 : 200;
  const auto start = std::chrono::steady_clock::now();
  std::string section = absl::StrCat("Generated by `blkbench gate-proof` (seed ", kSeed, ", ",
                                     trials, " trials per entry); do not edit by hand.\n\n");
  section += NoiseModelTables(trials);
  section += "\n";
  section += SyntheticTables(trials);
  section += "\n";
  absl::StatusOr<std::string> engine = EngineTables(trials, pool, err);
  if (!engine.ok()) {
    err << "blkbench gate-proof: engine runs failed: " << engine.status().message() << "\n";
    return 1;
  }
  section += *engine;
  out << section;
  err << "gate-proof: "
      << std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()
      << " s in all\n";
  if (a.flags.count("write") && !Replace(a.flags.at("write"), section, err)) return 1;
  return 0;
}

CommandSpec GateProofCommand() {
  return {
      .name = "gate-proof",
      .summary = "measure the gate's false alarms and power (no controller)",
      .flags = {{"write", "FILE", "replace the gate-proof section of FILE (docs/gating.md)"},
                {"trials", "N", "simulated experiments per synthetic entry (default 500)"},
                {"quick", "", "fewer trials and smaller engine pools (for tests)"},
                {"outliers", "SHARExFACTOR",
                 "noise model: share of repeats scaled by FACTOR (0.1x0.7)"},
                {"cv-ratio", "R", "noise model: candidate CV R x the baseline's"},
                {"cv-spread", "S", "noise model: cell CVs log-uniform from cv/S to cv*S"},
                {"tails", "DF", "noise model: Student t with DF degrees of freedom (1, 2 or > 2)"},
                {"drift", "D", "noise model: relative drift from first to last repeat (0.04)"},
                {"fitted", "", "noise model: the one fitted from loop-device runs"},
                {"fit", "CSV", "fit a noise model from cell,repeat,run,iops rows; print it"},
                {"repeats", "N", "model report: repeats per side (default 5)"},
                {"cv", "CV", "model report: typical CV (default 0.02)"},
                {"change", "C", "model report: true change for power (default -0.05)"},
                {"auto-repeat", "N", "model report: also --auto-repeat N (extra repeats per side)"},
                {"method",
                 "METHOD",
                 "model report: the test",
                 {"robust-welch", "moderated-t", "rank-sum"}}},
      .run = [](const Args& a, Client*, std::ostream& out, std::ostream& err) {
        return RunGateProof(a, out, err);
      }};
}

}  // namespace blkbench
