// gate-proof's noise models, model report, model table and --fit (gate_proof_models.h).
#include "cli/gate_proof_models.h"

#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "controller/gate/gate_proof.h"
#include "controller/gate/robust.h"

namespace blkbench {
namespace {

constexpr uint64_t kModelSeed = 20250101;

std::string Pct(double x) {
  char buf[32];
  if (x > 0 && x < 0.001) return "<0.1 %";
  std::snprintf(buf, sizeof buf, "%.1f %%", 100 * x);
  return buf;
}

std::string Pct2(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f %%", 100 * x);
  return buf;
}

bool Number(const Args& a, const char* flag, double* v, std::ostream& err) {
  if (!a.flags.count(flag)) return true;
  if (absl::SimpleAtod(a.flags.at(flag), v)) return true;
  err << "blkbench gate-proof: --" << flag << ": expected a number, got '" << a.flags.at(flag)
      << "'\n";
  return false;
}

struct Row {
  gate::VerdictRates null, power, bh, auto_null, auto_power;
};

Row Measure(const gate::NoiseModel& m, const gate::GateOptions& opts, int repeats, double cv,
            double change, int trials, int auto_repeat, int auto_trials, uint64_t seed) {
  gate::SyntheticScenario s;
  s.model = m;
  s.repeats = repeats;
  s.cv = cv;
  s.anchors = true;
  Row r;
  r.null = gate::SimulateSynthetic(s, opts, trials, seed);
  s.change = change;
  r.power = gate::SimulateSynthetic(s, opts, trials, seed + 1);
  s.anchors = false;
  s.fdr = true;
  r.bh = gate::SimulateSynthetic(s, opts, trials, seed + 2);
  if (auto_repeat > 0) {
    s.fdr = false;
    s.max_extra = auto_repeat;
    r.auto_power = gate::SimulateSynthetic(s, opts, auto_trials, seed + 3);
    s.change = 0;
    r.auto_null = gate::SimulateSynthetic(s, opts, auto_trials, seed + 4);
  }
  return r;
}

std::string TableRow(const std::vector<std::string>& cells) {
  std::string out = "|";
  for (const std::string& c : cells) absl::StrAppend(&out, " ", c, " |");
  return out + "\n";
}

}  // namespace

absl::StatusOr<std::optional<gate::NoiseModel>> NoiseModelFromFlags(const Args& a) {
  gate::NoiseModel m;
  bool any = false;
  if (a.flags.count("fitted")) {
    m = gate::FittedLoopShmModel();
    any = true;
  }
  if (a.flags.count("outliers")) {
    absl::StatusOr<gate::NoiseModel> o = gate::WithOutliers(m, a.flags.at("outliers"));
    if (!o.ok()) return o.status();
    m = *std::move(o);
    any = true;
  }
  struct Flag {
    const char* name;
    double* field;
    bool (*ok)(double);
    const char* want;
  };
  const Flag flags[] = {
      {"cv-ratio", &m.cv_ratio, [](double v) { return v > 0; }, "a ratio > 0"},
      {"cv-spread", &m.cv_spread, [](double v) { return v >= 1; }, "a factor >= 1"},
      {"tails", &m.t_df, [](double v) { return v == 1 || v == 2 || v > 2; },
       "degrees of freedom: 1, 2 or > 2"},
      {"drift", &m.drift, [](double v) { return v > -1 && v < 1; }, "a fraction in (-1, 1)"},
  };
  for (const Flag& f : flags) {
    if (!a.flags.count(f.name)) continue;
    double v = 0;
    if (!absl::SimpleAtod(a.flags.at(f.name), &v) || !f.ok(v)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", f.name, ": expected ", f.want, ", got '", a.flags.at(f.name), "'"));
    }
    *f.field = v;
    any = true;
  }
  if (!any) return std::nullopt;
  m.name = m.Describe();
  return std::optional<gate::NoiseModel>(m);
}

int RunModelReport(const Args& a, const gate::NoiseModel& model, std::ostream& out,
                   std::ostream& err) {
  double repeats = 5, cv = 0.02, change = -0.05, auto_repeat = 0, trials = 1000;
  if (a.flags.count("quick")) trials = 100;
  if (!Number(a, "repeats", &repeats, err) || !Number(a, "cv", &cv, err) ||
      !Number(a, "change", &change, err) || !Number(a, "auto-repeat", &auto_repeat, err) ||
      !Number(a, "trials", &trials, err)) {
    return 2;
  }
  if (repeats < 2 || cv <= 0 || change >= 0 || change <= -1 || auto_repeat < 0 ||
      auto_repeat > 100 || trials < 1) {
    err << "blkbench gate-proof: need --repeats >= 2, --cv > 0, -1 < --change < 0, "
           "0 <= --auto-repeat <= 100, --trials >= 1\n";
    return 2;
  }
  gate::GateOptions opts;
  if (a.flags.count("method")) {
    const std::string& m = a.flags.at("method");
    if (m == "moderated-t") {
      opts.method = gate::Method::kModeratedT;
    } else if (m == "rank-sum") {
      opts.method = gate::Method::kRankSum;
    }
  }
  const int n = static_cast<int>(repeats), t = static_cast<int>(trials);
  const int extra = static_cast<int>(auto_repeat);
  const Row r = Measure(model, opts, n, cv, change, t, extra, t, kModelSeed);
  out << "noise: " << model.Describe() << "; " << n << " repeats per side, CV " << Pct(cv)
      << ", change " << Pct(change) << ", method " << gate::MethodName(opts.method) << ", " << t
      << " experiments of 20 cells\n";
  out << "  false alarms per cell (regression | improvement): " << Pct2(r.null.regression) << " | "
      << Pct2(r.null.improvement) << "\n";
  out << "  power per cell (own p): " << Pct(r.power.regression)
      << "; through blkbench gate (BH over 20 changed cells): " << Pct(r.bh.regression) << "\n";
  out << "  outliers flagged: " << Pct(r.null.outlier_share) << " of repeats\n";
  out << "  LKP's rule: power " << Pct(r.power.lkp_regression) << ", false alarms "
      << Pct2(r.null.lkp_regression) << "\n";
  out << "  mmtests' rule: power " << Pct(r.power.mmtests_regression) << ", false alarms "
      << Pct2(r.null.mmtests_regression) << "\n";
  if (extra > 0) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "%.1f mean / %d max repeats per side", r.auto_power.mean_repeats,
                  r.auto_power.max_repeats);
    out << "  --auto-repeat " << extra << ": power " << Pct(r.auto_power.regression) << " (" << buf
        << "), false alarms " << Pct2(r.auto_null.regression);
    std::snprintf(buf, sizeof buf, " (%.1f mean repeats per side)", r.auto_null.mean_repeats);
    out << buf << "\n";
  }
  return 0;
}

std::string NoiseModelTables(int trials) {
  std::vector<gate::NoiseModel> models(8);
  models[1].outlier_share = 0.1;
  models[1].outlier_factor = 0.7;
  models[2].cv_ratio = 3;
  models[3].cv_ratio = 3;
  models[3].cv_spread = 3;
  models[4].t_df = 3;
  models[5].t_df = 2;
  models[6].drift = 0.04;
  models[7] = gate::FittedLoopShmModel();
  const int auto_trials = std::max(1, trials / 4);
  std::string out = absl::StrCat(
      "#### Noise models at 5 repeats, 2 % CV, -5 % (robust-welch, the default)\n\n"
      "Per entry ",
      trials, " experiments of 20 cells (", trials * 20, " cells); the --auto-repeat columns ",
      auto_trials, " experiments (", auto_trials * 20, " cells), up to ", kProofAutoRepeat,
      " extra repeats per side. \"False alarms\" are cells called a regression when nothing "
      "changed, each cell on its own p; \"BH\" is `blkbench gate` itself with all 20 cells "
      "changed. LKP and mmtests: their rules (controller/gate/anchors.h) on the same "
      "repeats.\n\n");
  out += TableRow({"noise", "false alarms", "power", "power (BH)", "LKP power / false alarms",
                   "mmtests power / false alarms", "auto-repeat power", "repeats spent",
                   "auto-repeat false alarms"});
  out += "|---|---|---|---|---|---|---|---|---|\n";
  gate::GateOptions opts;
  for (size_t i = 0; i < models.size(); ++i) {
    const Row r = Measure(models[i], opts, 5, 0.02, -0.05, trials, kProofAutoRepeat, auto_trials,
                          kModelSeed + 10 * i);
    char spent[64];
    std::snprintf(spent, sizeof spent, "%.1f (max %d)", r.auto_power.mean_repeats,
                  r.auto_power.max_repeats);
    out += TableRow({i == 7 ? "fitted (loop over /dev/shm)" : models[i].Describe(),
                     Pct2(r.null.regression), Pct(r.power.regression), Pct(r.bh.regression),
                     Pct(r.power.lkp_regression) + " / " + Pct(r.null.lkp_regression),
                     Pct(r.power.mmtests_regression) + " / " + Pct(r.null.mmtests_regression),
                     Pct(r.auto_power.regression), spent, Pct2(r.auto_null.regression)});
  }
  return out;
}

int RunFit(const std::string& path, std::ostream& out, std::ostream& err) {
  std::ifstream in(path);
  if (!in) {
    err << "blkbench gate-proof: --fit: cannot read '" << path << "'\n";
    return 1;
  }
  std::map<int, std::map<int, double>> by_cell;  // cell -> repeat -> iops
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    const std::vector<std::string> f = absl::StrSplit(line, ',');
    int cell = 0, repeat = 0;
    double iops = 0;
    if (f.size() < 4 || !absl::SimpleAtoi(f[0], &cell) || !absl::SimpleAtoi(f[1], &repeat) ||
        !absl::SimpleAtod(f[3], &iops)) {
      err << "blkbench gate-proof: --fit: bad row '" << line << "'\n";
      return 1;
    }
    by_cell[cell][repeat] = iops;
  }
  std::vector<std::vector<double>> cells;
  std::vector<double> cvs;
  for (const auto& [cell, runs] : by_cell) {
    std::vector<double> x;
    for (const auto& [repeat, v] : runs) x.push_back(v);
    cvs.push_back(gate::Cv(x));
    cells.push_back(std::move(x));
  }
  const gate::NoiseModel m = gate::FitNoiseModel(cells);
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "// cells %zu, repeats per cell %zu; measured CV %.1f %% to %.1f %% (median "
                "%.1f %%)\n",
                cells.size(), cells.empty() ? size_t{0} : cells[0].size(),
                100 * *std::min_element(cvs.begin(), cvs.end()),
                100 * *std::max_element(cvs.begin(), cvs.end()), 100 * gate::Median(cvs));
  out << buf;
  std::snprintf(buf, sizeof buf,
                "// outlier_share %.4f, outlier_factor %.3f, cv_spread %.2f, drift %.4f\n",
                m.outlier_share, m.outlier_factor, m.cv_spread, m.drift);
  out << buf;
  std::snprintf(buf, sizeof buf, "m.outlier_share = %.4f;\nm.outlier_factor = %.3f;\n",
                m.outlier_share, m.outlier_factor);
  out << buf;
  out << "m.residuals = {";
  for (size_t i = 0; i < m.residuals.size(); ++i) {
    std::snprintf(buf, sizeof buf, "%s%.4f", i % 8 == 0 ? "\n    " : " ", m.residuals[i]);
    out << buf << (i + 1 < m.residuals.size() ? "," : "");
  }
  out << "};\n";
  return 0;
}

}  // namespace blkbench
