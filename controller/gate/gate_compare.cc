// CompareResults and ExitStatus: matches cells of two results, takes per-run samples and
// decides every cell x metric; see gate_report.h.
#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "common/metrics/run_labels.h"
#include "common/resolved_job.h"
#include "common/sim_vocabulary.h"
#include "controller/gate/gate_format.h"
#include "controller/gate/gate_report.h"
#include "google/protobuf/util/message_differencer.h"
#include "workloads/format.h"
#include "workloads/job_options.h"

namespace blkbench::gate {
namespace {

// One experiment's cells and their runs, by cell index.
struct SideIndex {
  std::map<uint32_t, v1::CellSpec> cells;
  std::map<uint32_t, std::vector<const v1::Run*>> done;  // RUN_DONE runs
  std::map<uint32_t, int> other;                         // runs in any other state
};

SideIndex Index(const v1::GetResultsResponse& resp) {
  SideIndex s;
  for (const v1::CellSpec& c : resp.experiment().cells()) s.cells.emplace(c.index(), c);
  for (const v1::ResultRow& row : resp.rows()) {
    const v1::Run& run = row.run();
    if (row.has_cell()) s.cells.emplace(run.cell_index(), row.cell());
    if (run.state() == v1::RUN_DONE) {
      s.done[run.cell_index()].push_back(&run);
    } else {
      ++s.other[run.cell_index()];
    }
  }
  return s;
}

const v1::AxisValue* FindAxis(const v1::CellSpec& c, const std::string& key) {
  for (const v1::AxisValue& a : c.axes()) {
    if (a.key() == key) return &a;
  }
  return nullptr;
}

v1::CellSpec WithoutAxis(const v1::CellSpec& c, const std::string& axis) {
  v1::CellSpec out = c;
  out.clear_axes();
  for (const v1::AxisValue& a : c.axes()) {
    if (a.key() != axis) *out.add_axes() = a;
  }
  return out;
}

// Axes other than `axis`, sorted by key, so file order does not matter.
std::string MatchKey(const v1::CellSpec& c, const std::string& axis) {
  std::vector<std::string> kv;
  for (const v1::AxisValue& a : c.axes()) {
    if (a.key() != axis) kv.push_back(absl::StrCat(a.key(), "=", a.value()));
  }
  std::sort(kv.begin(), kv.end());
  return absl::StrJoin(kv, "\x1f");
}

// The cells of one side: all of them, or those whose `axis` has `value`.
absl::StatusOr<std::vector<const v1::CellSpec*>> SelectCells(const SideIndex& side,
                                                             const v1::Experiment& exp,
                                                             const std::string& axis,
                                                             const std::string& value) {
  std::vector<const v1::CellSpec*> out;
  std::set<std::string> axes, values;
  for (const auto& [index, cell] : side.cells) {
    for (const v1::AxisValue& a : cell.axes()) axes.insert(a.key());
    const v1::AxisValue* a = axis.empty() ? nullptr : FindAxis(cell, axis);
    if (a) values.insert(a->value());
    if (axis.empty() || (a && a->value() == value)) out.push_back(&cell);
  }
  if (!axis.empty() && !axes.count(axis)) {
    return absl::InvalidArgumentError(
        absl::StrCat("experiment ", exp.id(), " has no axis '", axis,
                     "' (its axes: ", axes.empty() ? "none" : absl::StrJoin(axes, ", "), ")"));
  }
  if (!axis.empty() && out.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("experiment ", exp.id(), " has no cell with ",
                                                   axis, "=", value,
                                                   " (values: ", absl::StrJoin(values, ", "), ")"));
  }
  return out;
}

// "" when the two cells run the same job once the axis under test is set alike; else a
// one-line description of what differs.
absl::StatusOr<std::string> SpecDifference(const v1::CellSpec& base, const v1::CellSpec& cand,
                                           const GateRequest& req) {
  v1::CellSpec a = base, b = cand;
  for (v1::CellSpec* c : {&a, &b}) {
    c->clear_index();
    c->clear_axes();
    if (req.axis.empty()) continue;
    const workloads::OptionDef* def = workloads::FindOption(req.axis);
    if (def == nullptr || !def->Apply(req.baseline_value, *c)) {
      return absl::InvalidArgumentError(absl::StrCat("axis '", req.axis, "' with value '",
                                                     req.baseline_value,
                                                     "' is not a key blkbench can set on a cell"));
    }
  }
  google::protobuf::util::MessageDifferencer differ;
  std::string diff;
  differ.ReportDifferencesToString(&diff);
  if (differ.Compare(a, b)) return std::string();
  while (!diff.empty() && diff.back() == '\n') diff.pop_back();
  return absl::StrReplaceAll(diff, {{"\n", "; "}});
}

void AddDistinct(std::vector<std::string>& v, const std::string& s) {
  if (!s.empty() && std::find(v.begin(), v.end(), s) == v.end()) v.push_back(s);
}

SideFacts Facts(const SideIndex& side, const v1::CellSpec& cell) {
  SideFacts f;
  f.cell_index = cell.index();
  f.label = workloads::CellLabel(cell);
  // A simulated cell runs the engine's kernel model whatever host ran it; an empty kernel
  // there is the engine's default, not "whatever the host had".
  f.target_kernel = cell.target().kernel().empty() && IsSimulated(cell.target().device_class())
                        ? std::string(kDefaultSimKernel)
                        : cell.target().kernel();
  if (auto it = side.done.find(cell.index()); it != side.done.end()) {
    f.done_runs = static_cast<int>(it->second.size());
    for (const v1::Run* r : it->second) {
      AddDistinct(f.hosts, r->result().host().hostname());
      AddDistinct(f.kernels, r->result().host().kernel_release());
    }
  }
  if (auto it = side.other.find(cell.index()); it != side.other.end()) f.other_runs = it->second;
  return f;
}

// Samples of one metric for one side, plus the side's merged histogram. Runs whose
// histogram cannot be used are skipped for latency metrics and reported once each.
void Sample(const MetricDef& def, const std::vector<const v1::Run*>& runs,
            std::vector<double>& samples, std::vector<uint64_t>& ids,
            std::vector<uint32_t>& repeats, std::set<uint64_t>& warned, GateReport& report) {
  for (const v1::Run* r : runs) {
    absl::StatusOr<double> v = RunSample(def, r->result());
    if (v.ok()) {
      samples.push_back(*v);
      ids.push_back(r->id());
      repeats.push_back(r->repeat());
    } else if (warned.insert(r->id()).second) {
      report.warnings.push_back(absl::StrCat("run ", r->id(), " (cell ", r->cell_index(),
                                             ", repeat ", r->repeat(), "): ", v.status().message(),
                                             "; left out of latency"));
    }
  }
}

LatencyHistogram Merged(const std::vector<const v1::Run*>& runs) {
  LatencyHistogram merged;
  for (const v1::Run* r : runs) {
    if (auto h = LatencyHistogram::FromProto(r->result().lat()); h.ok()) merged.Merge(*h);
  }
  return merged;
}

const std::vector<const v1::Run*>& DoneRuns(const SideIndex& side, uint32_t index) {
  static const std::vector<const v1::Run*> kNone;
  auto it = side.done.find(index);
  return it == side.done.end() ? kNone : it->second;
}

absl::Status CheckRequest(const GateRequest& req, bool same_experiment) {
  const GateOptions& o = req.options;
  if (!(o.min_effect >= 0.0 && o.min_effect < 1.0) || !(o.alpha > 0.0 && o.alpha < 0.5) ||
      o.min_repeats < 1 || o.max_repeats < o.min_repeats) {
    return absl::InvalidArgumentError(
        "gate options: need 0 <= min_effect < 1, 0 < alpha < 0.5, 1 <= min_repeats <= "
        "max_repeats");
  }
  if (req.metrics.empty()) return absl::InvalidArgumentError("no metrics to compare");
  if (req.axis.empty()) {
    if (!req.baseline_value.empty() || !req.candidate_value.empty()) {
      return absl::InvalidArgumentError("baseline and candidate values need an axis");
    }
    return absl::OkStatus();
  }
  if (req.baseline_value.empty() || req.candidate_value.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("axis '", req.axis, "' needs a baseline and a candidate value"));
  }
  if (same_experiment && req.baseline_value == req.candidate_value) {
    return absl::InvalidArgumentError(
        absl::StrCat("baseline and candidate are both ", req.axis, "=", req.baseline_value));
  }
  return absl::OkStatus();
}

std::string Title(const v1::Experiment& b, const v1::Experiment& c, const GateRequest& req) {
  if (!req.axis.empty()) {
    return absl::StrCat(req.axis, " ", req.baseline_value, " -> ", req.candidate_value);
  }
  return absl::StrCat("experiment ", b.id(), " -> experiment ", c.id());
}

}  // namespace

absl::StatusOr<GateReport> CompareResults(const v1::GetResultsResponse& baseline,
                                          const v1::GetResultsResponse& candidate,
                                          const GateRequest& req) {
  const v1::Experiment& bexp = baseline.experiment();
  const v1::Experiment& cexp = candidate.experiment();
  if (absl::Status s = CheckRequest(req, &baseline == &candidate || bexp.id() == cexp.id());
      !s.ok()) {
    return s;
  }
  std::vector<MetricDef> metrics;
  for (const std::string& name : req.metrics) {
    absl::StatusOr<MetricDef> def = ParseMetric(name);
    if (!def.ok()) return def.status();
    metrics.push_back(*std::move(def));
  }

  GateReport report;
  report.title = Title(bexp, cexp, req);
  report.axis = req.axis;
  report.baseline_value = req.baseline_value;
  report.candidate_value = req.candidate_value;
  report.baseline_experiment = bexp.id();
  report.candidate_experiment = cexp.id();
  report.baseline_file = bexp.file_name();
  report.candidate_file = cexp.file_name();
  report.options = req.options;

  const SideIndex bside = Index(baseline);
  const SideIndex cside = Index(candidate);
  // Runs in TCG guests compare kernels with each other, not with hardware: said once.
  for (const SideIndex* side : {&bside, &cside}) {
    bool tcg = false;
    for (const auto& [cell, runs] : side->done) {
      for (const v1::Run* r : runs) tcg = tcg || r->result().device().vm().accel() == "tcg";
    }
    if (tcg) {
      report.warnings.push_back(
          absl::StrCat(side == &bside ? "baseline" : "candidate", " runs ", kTcgCaveat));
    }
  }
  auto bcells = SelectCells(bside, bexp, req.axis, req.baseline_value);
  if (!bcells.ok()) return bcells.status();
  auto ccells = SelectCells(cside, cexp, req.axis, req.candidate_value);
  if (!ccells.ok()) return ccells.status();

  // Candidate cells by their matching key; a key seen twice keeps the first cell.
  std::map<std::string, const v1::CellSpec*> by_key;
  std::set<uint32_t> used;
  for (const v1::CellSpec* c : *ccells) by_key.emplace(MatchKey(*c, req.axis), c);

  std::vector<std::pair<const v1::CellSpec*, const v1::CellSpec*>> pairs;
  for (const v1::CellSpec* b : *bcells) {
    auto it = by_key.find(MatchKey(*b, req.axis));
    if (it == by_key.end() || used.count(it->second->index())) {
      report.unmatched.push_back(
          {true, b->index(), workloads::CellLabel(*b), "no candidate cell with the same axes"});
      continue;
    }
    absl::StatusOr<std::string> diff = SpecDifference(*b, *it->second, req);
    if (!diff.ok()) return diff.status();
    if (!diff->empty()) {
      report.unmatched.push_back({true, b->index(), workloads::CellLabel(*b),
                                  absl::StrCat("same axes as candidate cell ", it->second->index(),
                                               " but a different job: ", *diff)});
      continue;
    }
    used.insert(it->second->index());
    pairs.emplace_back(b, it->second);
  }
  for (const v1::CellSpec* c : *ccells) {
    if (used.count(c->index())) continue;
    report.unmatched.push_back(
        {false, c->index(), workloads::CellLabel(*c), "no matching baseline cell"});
  }

  std::vector<CellInput> inputs;
  std::set<uint64_t> bwarned, cwarned;
  for (const auto& [b, c] : pairs) {
    CellComparison cell;
    cell.label = workloads::CellLabel(WithoutAxis(*b, req.axis));
    cell.base = Facts(bside, *b);
    cell.cand = Facts(cside, *c);
    const auto& bruns = DoneRuns(bside, b->index());
    const auto& cruns = DoneRuns(cside, c->index());
    cell.base_latency = Merged(bruns);
    cell.cand_latency = Merged(cruns);
    const LatencyHistogram& bmerged = cell.base_latency;
    const LatencyHistogram& cmerged = cell.cand_latency;
    for (const MetricDef& def : metrics) {
      MetricComparison m;
      m.metric = def;
      Sample(def, bruns, m.base, m.base_runs, m.base_repeat_numbers, bwarned, report);
      Sample(def, cruns, m.cand, m.cand_runs, m.cand_repeat_numbers, cwarned, report);
      m.base_merged = MergedValue(def, bmerged);
      m.cand_merged = MergedValue(def, cmerged);
      // One noise prior per metric: its cells share a scale of noise.
      int look = -1;
      if (req.options.look >= 0) {
        const auto it = req.looks.find({b->index(), c->index()});
        look = it == req.looks.end() ? 0 : it->second;
      }
      inputs.push_back(
          {m.base, m.cand, def.direction, static_cast<int>(&def - metrics.data()), look});
      cell.metrics.push_back(std::move(m));
    }
    report.cells.push_back(std::move(cell));
  }

  const std::vector<CellVerdict> verdicts = DecideAll(inputs, req.options);
  size_t next = 0;
  for (CellComparison& cell : report.cells) {
    cell.recipe = ReproductionRecipe(report, cell);
    for (MetricComparison& m : cell.metrics) {
      m.verdict = verdicts[next++];
      for (const OutlierFlag& f : m.verdict.outliers) {
        const auto& ids = f.candidate ? m.cand_runs : m.base_runs;
        const auto& reps = f.candidate ? m.cand_repeat_numbers : m.base_repeat_numbers;
        const size_t i = static_cast<size_t>(f.index);
        m.outlier_lines.push_back(absl::StrCat(
            "run ", i < ids.size() ? ids[i] : 0, " (", f.candidate ? "candidate" : "baseline",
            " cell ", f.candidate ? cell.cand.cell_index : cell.base.cell_index, ", repeat ",
            i < reps.size() ? reps[i] : 0, ") ", m.metric.name, " ",
            FormatMetricValue(m.metric, f.value), ": ", f.reason, "; set aside"));
      }
      switch (m.verdict.verdict) {
        case Verdict::kRegression:
          ++report.counts.regressions;
          break;
        case Verdict::kImprovement:
          ++report.counts.improvements;
          break;
        case Verdict::kNoChange:
          ++report.counts.no_change;
          break;
        case Verdict::kInconclusive:
          ++report.counts.inconclusive;
          break;
      }
      m.headline = ChangeHeadline(report, cell, m);
    }
  }
  return report;
}

int ExitStatus(const GateReport& report) {
  if (report.counts.regressions > 0) return 1;
  if (report.counts.inconclusive > 0 || report.cells.empty()) return 2;
  return 0;
}

}  // namespace blkbench::gate
