// The bisect search and its renderings; see bisect.h.
#include "cli/bisect.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "controller/gate/gate_format.h"
#include "controller/gate/gate_metrics.h"

namespace blkbench {
namespace {

using gate::CellVerdict;
using gate::Verdict;

// The results of every round a kernel has had, as one response.
struct Measured {
  v1::GetResultsResponse results;
  int rounds = 0;
};

void Merge(const v1::GetResultsResponse& more, v1::GetResultsResponse& into) {
  if (into.rows().empty() && into.experiment().cells().empty()) {
    into = more;
    return;
  }
  for (const v1::ResultRow& row : more.rows()) *into.add_rows() = row;
  for (const v1::Run& run : more.experiment().runs()) *into.mutable_experiment()->add_runs() = run;
}

class Search {
 public:
  Search(const BisectOptions& o, const BisectMeasure& measure)
      : o_(o), measure_(measure), kernels_(o.kernels.size()) {}

  absl::StatusOr<BisectOutcome> Run();

 private:
  absl::Status Round(size_t i) {
    absl::StatusOr<v1::GetResultsResponse> r = measure_(i, kernels_[i].rounds);
    if (!r.ok()) return r.status();
    Merge(*r, kernels_[i].results);
    ++kernels_[i].rounds;
    return absl::OkStatus();
  }
  bool CanRepeat(size_t i) const { return kernels_[i].rounds < o_.max_rounds; }

  // The gate's verdict on every cell, kernels[a] as the baseline and kernels[b] as the
  // candidate; keyed by the cell's label (its axes other than the kernel).
  absl::StatusOr<gate::GateReport> Compare(size_t a, size_t b) const {
    gate::GateRequest req;
    req.axis = kBisectAxis;
    req.baseline_value = o_.kernels[a];
    req.candidate_value = o_.kernels[b];
    req.metrics = {o_.metric};
    req.options = o_.gate;
    return gate::CompareResults(kernels_[a].results, kernels_[b].results, req);
  }

  static const gate::MetricComparison* Find(const gate::GateReport& r, const std::string& cell) {
    for (const gate::CellComparison& c : r.cells) {
      if (c.label == cell && !c.metrics.empty()) return &c.metrics[0];
    }
    return nullptr;
  }

  BisectStep Step(size_t i, std::string role) const {
    BisectStep s;
    s.index = i;
    s.kernel = o_.kernels[i];
    s.role = std::move(role);
    s.rounds = kernels_[i].rounds;
    return s;
  }

  const BisectOptions& o_;
  const BisectMeasure& measure_;
  std::vector<Measured> kernels_;
};

StepCell CellOf(const std::string& label, const gate::MetricComparison* vs_good,
                const gate::MetricComparison* vs_bad, bool kernel_is_candidate_of_good) {
  StepCell c;
  c.cell = label;
  if (vs_good != nullptr) {
    c.vs_good = vs_good->verdict;
    c.centre =
        kernel_is_candidate_of_good ? vs_good->verdict.cand_centre : vs_good->verdict.base_centre;
    c.runs =
        kernel_is_candidate_of_good ? vs_good->verdict.cand_repeats : vs_good->verdict.base_repeats;
  }
  if (vs_bad != nullptr) c.vs_bad = vs_bad->verdict;
  return c;
}

absl::StatusOr<BisectOutcome> Search::Run() {
  const size_t n = o_.kernels.size();
  BisectOutcome out;
  out.kernels = o_.kernels;
  out.metric = o_.metric;
  out.last_good = 0;
  out.first_bad = n - 1;

  // The ends, repeated while their difference is undecided.
  for (size_t end : {size_t{0}, n - 1}) {
    if (absl::Status s = Round(end); !s.ok()) return s;
  }
  gate::GateReport ends;
  for (;;) {
    absl::StatusOr<gate::GateReport> r = Compare(0, n - 1);
    if (!r.ok()) return r.status();
    ends = *std::move(r);
    const gate::GateCounts& k = ends.counts;
    if (k.regressions > 0) break;
    if (k.inconclusive == 0 && !ends.cells.empty()) {
      out.verdict = BisectVerdict::kNoRegression;
      out.reason = absl::StrCat("no cell's ", o_.metric, " regressed from ", o_.kernels[0], " to ",
                                o_.kernels[n - 1], " (", k.no_change, " no change, ",
                                k.improvements, " improvement)");
      break;
    }
    if (!CanRepeat(0) || !CanRepeat(n - 1)) {
      out.verdict = BisectVerdict::kInconclusive;
      out.reason =
          ends.cells.empty()
              ? absl::StrCat("no cell of ", o_.kernels[0], " matched one of ", o_.kernels[n - 1])
              : absl::StrCat("whether ", o_.kernels[n - 1], " is worse than ", o_.kernels[0],
                             " stayed undecided after ", o_.max_rounds,
                             " round(s) of runs on each (", k.inconclusive,
                             " cell(s) inconclusive)");
      break;
    }
    for (size_t end : {size_t{0}, n - 1}) {
      if (absl::Status s = Round(end); !s.ok()) return s;
    }
  }
  BisectStep good = Step(0, "good end");
  good.result = StepClass::kGood;
  BisectStep bad = Step(n - 1, "bad end");
  bad.result = ends.counts.regressions > 0                   ? StepClass::kBad
               : out.verdict == BisectVerdict::kNoRegression ? StepClass::kGood
                                                             : StepClass::kUndecided;
  for (const gate::CellComparison& c : ends.cells) {
    if (c.metrics.empty()) continue;
    const bool interest = c.metrics[0].verdict.verdict == Verdict::kRegression;
    if (interest) out.cells.push_back(c.label);
    if (interest || ends.counts.regressions == 0) {
      good.cells.push_back(CellOf(c.label, &c.metrics[0], nullptr, false));
      bad.cells.push_back(CellOf(c.label, &c.metrics[0], nullptr, true));
      out.change.push_back(bad.cells.back());
    }
  }
  out.steps = {good, bad};
  if (ends.counts.regressions == 0) return out;

  // The bracket [lo, hi]: lo is like good, hi like bad.
  size_t lo = 0, hi = n - 1;
  while (hi - lo > 1) {
    const size_t mid = lo + (hi - lo) / 2;
    if (absl::Status s = Round(mid); !s.ok()) return s;
    ++out.measured_steps;
    BisectStep step;
    for (;;) {
      absl::StatusOr<gate::GateReport> g = Compare(0, mid);
      if (!g.ok()) return g.status();
      absl::StatusOr<gate::GateReport> b = Compare(mid, n - 1);
      if (!b.ok()) return b.status();
      step = Step(mid, absl::StrCat("step ", out.measured_steps));
      bool any_bad = false, all_good = true;
      for (const std::string& cell : out.cells) {
        const gate::MetricComparison* vg = Find(*g, cell);
        const gate::MetricComparison* vb = Find(*b, cell);
        step.cells.push_back(CellOf(cell, vg, vb, true));
        const Verdict gv = vg ? vg->verdict.verdict : Verdict::kInconclusive;
        const Verdict bv = vb ? vb->verdict.verdict : Verdict::kInconclusive;
        any_bad |= gv == Verdict::kRegression;
        all_good &=
            (gv == Verdict::kNoChange || gv == Verdict::kImprovement) && bv == Verdict::kRegression;
      }
      step.result = any_bad ? StepClass::kBad : all_good ? StepClass::kGood : StepClass::kUndecided;
      if (step.result != StepClass::kUndecided || !CanRepeat(mid)) break;
      if (absl::Status s = Round(mid); !s.ok()) return s;
    }
    out.steps.push_back(step);
    if (step.result == StepClass::kUndecided) {
      out.verdict = BisectVerdict::kInconclusive;
      out.last_good = lo;
      out.first_bad = hi;
      out.reason = absl::StrCat(o_.kernels[mid], " stayed like neither end after ", o_.max_rounds,
                                " round(s) of runs; the first bad kernel is one of ",
                                o_.kernels[lo + 1], " .. ", o_.kernels[hi]);
      return out;
    }
    (step.result == StepClass::kBad ? hi : lo) = mid;
  }

  out.verdict = BisectVerdict::kCulprit;
  out.last_good = lo;
  out.first_bad = hi;
  absl::StatusOr<gate::GateReport> pair = Compare(lo, hi);
  if (!pair.ok()) return pair.status();
  out.change.clear();
  for (const std::string& cell : out.cells) {
    if (const gate::MetricComparison* m = Find(*pair, cell)) {
      out.change.push_back(CellOf(cell, m, nullptr, true));
    }
  }
  std::stable_sort(out.change.begin(), out.change.end(), [](const StepCell& a, const StepCell& b) {
    return a.vs_good.relative_change < b.vs_good.relative_change;
  });
  return out;
}

const char* ClassName(StepClass c) {
  switch (c) {
    case StepClass::kGood:
      return "good";
    case StepClass::kBad:
      return "bad";
    case StepClass::kUndecided:
      break;
  }
  return "undecided";
}

// "-6.5% [-7.1%, -5.9%] regression"
std::string Change(const CellVerdict& v) {
  if (v.base_repeats == 0 && v.cand_repeats == 0) return "-";
  return absl::StrCat(gate::SignedPercent(v.relative_change), " ", gate::Interval(v), " ",
                      std::string(gate::VerdictName(v.verdict)));
}

std::string VerdictWord(const BisectOutcome& o) {
  switch (o.verdict) {
    case BisectVerdict::kCulprit:
      return "first bad kernel found";
    case BisectVerdict::kNoRegression:
      return "no regression between the ends";
    case BisectVerdict::kInconclusive:
      break;
  }
  return "INCONCLUSIVE";
}

// The headline lines, without markup.
std::vector<std::string> Headline(const BisectOutcome& o) {
  std::vector<std::string> lines;
  const size_t n = o.kernels.size();
  lines.push_back(absl::StrCat("blkbench bisect: ", VerdictWord(o), " (", o.metric, ", ", n,
                               " kernels, ", o.measured_steps, " step(s) besides the ends)"));
  if (o.verdict == BisectVerdict::kCulprit) {
    for (const StepCell& c : o.change) {
      lines.push_back(absl::StrCat(gate::SignedPercent(c.vs_good.relative_change), " ",
                                   std::string(gate::VerdictName(c.vs_good.verdict)), " of ",
                                   o.metric, " ", gate::Interval(c.vs_good), " on cell '", c.cell,
                                   "'"));
    }
    lines.push_back(absl::StrCat("first bad kernel: ", o.kernels[o.first_bad]));
    lines.push_back(absl::StrCat("last good kernel: ", o.kernels[o.last_good]));
  } else {
    lines.push_back(o.reason);
    if (o.verdict == BisectVerdict::kInconclusive && o.first_bad > o.last_good + 1) {
      lines.push_back(absl::StrCat("first bad kernel: one of ", o.kernels[o.last_good + 1], " .. ",
                                   o.kernels[o.first_bad]));
    }
  }
  return lines;
}

std::vector<std::vector<std::string>> StepRows(const BisectOutcome& o) {
  const gate::MetricDef metric = gate::ParseMetric(o.metric).value_or(gate::MetricDef{});
  const bool many = o.cells.size() > 1;
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> head = {"kernel", "role"};
  if (many) head.emplace_back("cell");
  head.insert(head.end(), {"runs", o.metric, "vs good end", "vs bad end", "result"});
  rows.push_back(head);
  for (const BisectStep& s : o.steps) {
    for (const StepCell& c : s.cells) {
      std::vector<std::string> row = {s.kernel, s.role};
      if (many) row.push_back(c.cell);
      const bool good_end = s.index == 0;
      row.insert(row.end(), {absl::StrCat(c.runs), gate::FormatMetricValue(metric, c.centre),
                             good_end ? "-" : Change(c.vs_good),
                             s.index + 1 == o.kernels.size() || good_end ? "-" : Change(c.vs_bad),
                             ClassName(s.result)});
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

google::protobuf::Value VerdictJson(const CellVerdict& v) {
  using gate::json::Num;
  google::protobuf::Struct s;
  auto& m = *s.mutable_fields();
  m["verdict"] = gate::json::Str(std::string(gate::VerdictName(v.verdict)));
  m["relative_change"] = Num(v.relative_change);
  m["ci_low"] = Num(v.ci_low);
  m["ci_high"] = Num(v.ci_high);
  m["p_value"] = Num(v.p_value);
  m["base_centre"] = Num(v.base_centre);
  m["cand_centre"] = Num(v.cand_centre);
  m["base_repeats"] = Num(v.base_repeats);
  m["cand_repeats"] = Num(v.cand_repeats);
  return gate::json::Obj(std::move(s));
}

google::protobuf::Value CellJson(const StepCell& c) {
  google::protobuf::Struct s;
  auto& m = *s.mutable_fields();
  m["cell"] = gate::json::Str(c.cell);
  m["centre"] = gate::json::Num(c.centre);
  m["runs"] = gate::json::Num(c.runs);
  m["vs_good"] = VerdictJson(c.vs_good);
  m["vs_bad"] = VerdictJson(c.vs_bad);
  return gate::json::Obj(std::move(s));
}

}  // namespace

absl::StatusOr<BisectOutcome> Bisect(const BisectOptions& options, const BisectMeasure& measure) {
  if (options.kernels.size() < 2) {
    return absl::InvalidArgumentError("bisect needs at least two kernels: a good and a bad one");
  }
  std::set<std::string> seen;
  for (const std::string& k : options.kernels) {
    if (!seen.insert(k).second) {
      return absl::InvalidArgumentError(absl::StrCat("kernel '", k, "' is listed twice"));
    }
  }
  if (options.max_rounds < 1) {
    return absl::InvalidArgumentError("max_rounds: expected at least 1");
  }
  if (absl::StatusOr<gate::MetricDef> m = gate::ParseMetric(options.metric); !m.ok()) {
    return m.status();
  }
  return Search(options, measure).Run();
}

int BisectExitStatus(const BisectOutcome& o) {
  switch (o.verdict) {
    case BisectVerdict::kCulprit:
      return 0;
    case BisectVerdict::kNoRegression:
      return 1;
    case BisectVerdict::kInconclusive:
      break;
  }
  return 2;
}

std::string RenderBisectText(const BisectOutcome& o) {
  std::vector<std::string> head = Headline(o);
  std::string out = head[0] + "\n";
  for (size_t i = 1; i < head.size(); ++i) absl::StrAppend(&out, "  ", head[i], "\n");
  std::vector<std::vector<std::string>> rows = StepRows(o);
  std::vector<bool> right(rows[0].size(), false);
  absl::StrAppend(&out, "\n", gate::AlignColumns(rows, right));
  return out;
}

std::string RenderBisectMarkdown(const BisectOutcome& o) {
  std::vector<std::string> head = Headline(o);
  std::string out = absl::StrCat("### ", head[0], "\n\n");
  for (size_t i = 1; i < head.size(); ++i) {
    absl::StrAppend(&out, "> ", gate::MarkdownEscape(head[i]), "\n");
  }
  std::vector<std::vector<std::string>> rows = StepRows(o);
  for (size_t r = 0; r < rows.size(); ++r) {
    std::vector<std::string> cells;
    for (const std::string& c : rows[r]) cells.push_back(gate::MarkdownEscape(c));
    absl::StrAppend(&out, r == 0 ? "\n" : "", "| ", absl::StrJoin(cells, " | "), " |\n");
    if (r == 0) {
      absl::StrAppend(&out, "|", absl::StrJoin(std::vector<std::string>(cells.size(), "---"), "|"),
                      "|\n");
    }
  }
  return out;
}

std::string RenderBisectJson(const BisectOutcome& o) {
  using gate::json::List;
  using gate::json::Num;
  using gate::json::Str;
  google::protobuf::Struct root;
  auto& f = *root.mutable_fields();
  const char* verdicts[] = {"culprit", "no_regression", "inconclusive"};
  f["verdict"] = Str(verdicts[static_cast<int>(o.verdict)]);
  f["metric"] = Str(o.metric);
  f["kernels"] = List(o.kernels, Str);
  f["exit_status"] = Num(BisectExitStatus(o));
  f["last_good"] = Str(o.kernels.empty() ? "" : o.kernels[o.last_good]);
  f["first_bad"] = Str(o.kernels.empty() ? "" : o.kernels[o.first_bad]);
  f["cells"] = List(o.cells, Str);
  f["change"] = List(o.change, CellJson);
  f["measured_steps"] = Num(o.measured_steps);
  f["reason"] = Str(o.reason);
  f["steps"] = List(o.steps, [](const BisectStep& s) {
    google::protobuf::Struct step;
    auto& m = *step.mutable_fields();
    m["kernel"] = Str(s.kernel);
    m["index"] = Num(static_cast<double>(s.index));
    m["role"] = Str(s.role);
    m["result"] = Str(ClassName(s.result));
    m["rounds"] = Num(s.rounds);
    m["cells"] = List(s.cells, CellJson);
    return gate::json::Obj(std::move(step));
  });
  return gate::json::Text(root);
}

}  // namespace blkbench
