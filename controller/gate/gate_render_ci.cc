// RenderJson and RenderJUnit: the gate report for machines (CI systems, dashboards);
// see gate_report.h.
#include <cmath>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "controller/gate/gate_format.h"
#include "controller/gate/gate_report.h"
#include "google/protobuf/struct.pb.h"

namespace blkbench::gate {
namespace {

using google::protobuf::Struct;
using google::protobuf::Value;
using json::Bool;
using json::List;
using json::Num;
using json::Obj;
using json::Str;

Value SideJson(const SideFacts& f) {
  Struct s;
  auto& m = *s.mutable_fields();
  m["cell_index"] = Num(f.cell_index);
  m["label"] = Str(f.label);
  m["target_kernel"] = Str(f.target_kernel);
  m["hosts"] = List(f.hosts, Str);
  m["kernels"] = List(f.kernels, Str);
  m["done_runs"] = Num(f.done_runs);
  m["other_runs"] = Num(f.other_runs);
  return Obj(std::move(s));
}

Value MetricJson(const MetricComparison& mc) {
  const CellVerdict& v = mc.verdict;
  Struct s;
  auto& m = *s.mutable_fields();
  m["metric"] = Str(mc.metric.name);
  m["direction"] = Str(mc.metric.direction == Direction::kHigherIsBetter ? "higher_is_better"
                                                                         : "lower_is_better");
  m["verdict"] = Str(VerdictName(v.verdict));
  m["relative_change"] = Num(v.relative_change);
  m["ci_low"] = Num(v.ci_low);
  m["ci_high"] = Num(v.ci_high);
  m["ci_confidence"] = Num(v.ci_confidence);
  m["p_value"] = Num(v.p_value);
  m["q_value"] = Num(v.q_value);
  m["base_centre"] = Num(v.base_centre);
  m["cand_centre"] = Num(v.cand_centre);
  m["base_cv"] = Num(v.base_cv);
  m["cand_cv"] = Num(v.cand_cv);
  m["base_repeats"] = Num(v.base_repeats);
  m["cand_repeats"] = Num(v.cand_repeats);
  m["repeats_needed"] = Num(v.repeats_needed);
  m["method"] = Str(MethodName(v.method));
  m["rank_p_value"] = Num(v.rank_p_value);
  m["t_df"] = Num(v.t_df);
  m["noise"] = Num(v.noise);
  m["base_samples"] = List(mc.base, Num);
  m["cand_samples"] = List(mc.cand, Num);
  m["base_merged"] = Num(mc.base_merged);
  m["cand_merged"] = Num(mc.cand_merged);
  m["outliers"] = List(mc.outlier_lines, Str);
  m["detail"] = Str(v.headline);
  m["headline"] = Str(mc.headline);
  return Obj(std::move(s));
}

std::string Samples(const std::vector<double>& xs) {
  return absl::StrJoin(xs, " ", [](std::string* out, double x) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", x);
    out->append(buf);
  });
}

}  // namespace

std::string RenderJson(const GateReport& r) {
  Struct root;
  auto& f = *root.mutable_fields();
  f["title"] = Str(r.title);
  f["axis"] = Str(r.axis);
  f["baseline_value"] = Str(r.baseline_value);
  f["candidate_value"] = Str(r.candidate_value);
  f["baseline_experiment"] = Num(static_cast<double>(r.baseline_experiment));
  f["candidate_experiment"] = Num(static_cast<double>(r.candidate_experiment));
  f["baseline_file"] = Str(r.baseline_file);
  f["candidate_file"] = Str(r.candidate_file);
  f["exit_status"] = Num(ExitStatus(r));
  Struct opts;
  auto& o = *opts.mutable_fields();
  o["min_effect"] = Num(r.options.min_effect);
  o["alpha"] = Num(r.options.alpha);
  o["min_repeats"] = Num(r.options.min_repeats);
  o["max_repeats"] = Num(r.options.max_repeats);
  o["strict"] = Bool(r.options.strict);
  o["mid_p"] = Bool(r.options.mid_p);
  o["method"] = Str(MethodName(r.options.method));
  o["rank_check_alpha"] = Num(r.options.rank_check_alpha);
  f["options"] = Obj(std::move(opts));
  Struct counts;
  auto& c = *counts.mutable_fields();
  c["regressions"] = Num(r.counts.regressions);
  c["improvements"] = Num(r.counts.improvements);
  c["no_change"] = Num(r.counts.no_change);
  c["inconclusive"] = Num(r.counts.inconclusive);
  c["unmatched_cells"] = Num(static_cast<double>(r.unmatched.size()));
  f["counts"] = Obj(std::move(counts));
  f["cells"] = List(r.cells, [](const CellComparison& cell) {
    Struct s;
    auto& m = *s.mutable_fields();
    m["label"] = Str(cell.label);
    m["recipe"] = Str(cell.recipe);
    m["baseline"] = SideJson(cell.base);
    m["candidate"] = SideJson(cell.cand);
    m["metrics"] = List(cell.metrics, MetricJson);
    return Obj(std::move(s));
  });
  f["unmatched"] = List(r.unmatched, [](const UnmatchedCell& u) {
    Struct s;
    auto& m = *s.mutable_fields();
    m["side"] = Str(u.baseline ? "baseline" : "candidate");
    m["index"] = Num(u.index);
    m["label"] = Str(u.label);
    m["reason"] = Str(u.reason);
    return Obj(std::move(s));
  });
  f["warnings"] = List(r.warnings, Str);
  return json::Text(root);
}

std::string RenderJUnit(const GateReport& r) {
  int tests = 0;
  std::string cases;
  for (const CellComparison& cell : r.cells) {
    for (const MetricComparison& m : cell.metrics) {
      ++tests;
      const CellVerdict& v = m.verdict;
      absl::StrAppend(&cases, "    <testcase classname=\"", XmlEscape(cell.label), "\" name=\"",
                      XmlEscape(m.metric.name), "\" time=\"0\"");
      if (v.verdict == Verdict::kRegression) {
        absl::StrAppend(
            &cases, ">\n      <failure type=\"regression\" message=\"", XmlEscape(m.headline),
            "\">",
            XmlEscape(absl::StrCat(v.headline, "\nbaseline ", m.metric.name,
                                   " per run: ", Samples(m.base), "\ncandidate ", m.metric.name,
                                   " per run: ", Samples(m.cand), "\n", cell.recipe)),
            "</failure>\n    </testcase>\n");
      } else if (v.verdict == Verdict::kInconclusive) {
        absl::StrAppend(
            &cases, ">\n      <skipped message=\"",
            XmlEscape(absl::StrCat("needs ~", v.repeats_needed, " repeats per side; ", v.headline)),
            "\"/>\n    </testcase>\n");
      } else {
        absl::StrAppend(&cases, ">\n      <system-out>", XmlEscape(v.headline),
                        "</system-out>\n    </testcase>\n");
      }
    }
  }
  std::string notes;
  for (const UnmatchedCell& u : r.unmatched) {
    absl::StrAppend(&notes, "unmatched ", u.baseline ? "baseline" : "candidate", " cell ", u.index,
                    " '", u.label, "': ", u.reason, "\n");
  }
  for (const std::string& w : r.warnings) absl::StrAppend(&notes, "warning: ", w, "\n");
  const std::string counts =
      absl::StrCat("tests=\"", tests, "\" failures=\"", r.counts.regressions,
                   "\" errors=\"0\" skipped=\"", r.counts.inconclusive, "\"");
  std::string out = absl::StrCat(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"blkbench gate\" ", counts,
      ">\n  <testsuite name=\"", XmlEscape(absl::StrCat("blkbench gate: ", r.title)), "\" ", counts,
      ">\n", cases);
  if (!notes.empty())
    absl::StrAppend(&out, "    <system-out>", XmlEscape(notes), "</system-out>\n");
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

}  // namespace blkbench::gate
