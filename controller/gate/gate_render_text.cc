// RenderText (LKP-style terminal table) and RenderMarkdown (PR comment); see gate_report.h.
#include <cmath>

#include "absl/strings/str_cat.h"
#include "controller/gate/gate_format.h"
#include "controller/gate/gate_report.h"

namespace blkbench::gate {
namespace {

// LKP's "± 1%" column: the side's sd/mean.
std::string Spread(double cv) {
  if (std::isnan(cv)) return "";
  return absl::StrCat("±", PlainPercent(cv));
}

std::string Repeats(const CellVerdict& v) {
  return absl::StrCat(v.base_repeats, "/", v.cand_repeats);
}

std::string MergedPair(const MetricComparison& m) {
  if (std::isnan(m.base_merged) && std::isnan(m.cand_merged)) return "";
  return absl::StrCat(FormatMetricValue(m.metric, m.base_merged), " -> ",
                      FormatMetricValue(m.metric, m.cand_merged));
}

std::string StatusWord(const GateReport& r) {
  switch (ExitStatus(r)) {
    case 0:
      return "PASS";
    case 1:
      return "FAIL";
    default:
      return "INCONCLUSIVE";
  }
}

std::string OptionsLine(const GateReport& r, size_t comparisons) {
  char buf[300];
  const bool t = r.options.method != Method::kRankSum;
  const char* test = r.options.method == Method::kRobustWelch
                         ? "robust Welch (MAD outliers set aside, noise pooled per metric and side)"
                     : t ? "moderated t (noise pooled per metric)"
                         : "Hodges-Lehmann";
  std::snprintf(buf, sizeof buf,
                "min effect %.1f%%, alpha %.3g, Benjamini-Hochberg across %zu comparisons, "
                "%s interval of the change at >= %.0f%% confidence%s",
                100.0 * r.options.min_effect, r.options.alpha, comparisons, test,
                100.0 * (1.0 - 2.0 * r.options.alpha), t ? ", rank-sum check" : "");
  return buf;
}

size_t Comparisons(const GateReport& r) {
  size_t n = 0;
  for (const CellComparison& c : r.cells) n += c.metrics.size();
  return n;
}

std::string SideName(const GateReport& r, bool baseline) {
  const uint64_t id = baseline ? r.baseline_experiment : r.candidate_experiment;
  const std::string& file = baseline ? r.baseline_file : r.candidate_file;
  return absl::StrCat("experiment ", id, file.empty() ? "" : absl::StrCat(" (", file, ")"));
}

std::string Sides(const GateReport& r) {
  if (r.baseline_experiment == r.candidate_experiment && r.baseline_file == r.candidate_file) {
    return SideName(r, true);
  }
  return absl::StrCat("baseline ", SideName(r, true), ", candidate ", SideName(r, false));
}

}  // namespace

std::string RenderText(const GateReport& r) {
  std::string out = absl::StrCat("blkbench gate: ", r.title, "\n", Sides(r), "\n",
                                 OptionsLine(r, Comparisons(r)), "\n\n");
  std::vector<std::vector<std::string>> rows = {{"cell", "metric", "base", "%stddev", "%change",
                                                 "cand", "%stddev", "verdict", "CI", "p", "q", "n",
                                                 "merged hist base -> cand"}};
  for (const CellComparison& c : r.cells) {
    for (const MetricComparison& m : c.metrics) {
      const CellVerdict& v = m.verdict;
      rows.push_back({c.label, m.metric.name, FormatMetricValue(m.metric, v.base_centre),
                      Spread(v.base_cv), SignedPercent(v.relative_change),
                      FormatMetricValue(m.metric, v.cand_centre), Spread(v.cand_cv), VerdictCell(v),
                      Interval(v), PValue(v.p_value), PValue(v.q_value), Repeats(v),
                      MergedPair(m)});
    }
  }
  if (rows.size() > 1) {
    out += AlignColumns(
        rows, {false, false, true, true, true, true, true, false, false, true, true, true, false});
  } else {
    out += "no matched cells to compare\n";
  }

  std::string changes, inconclusive;
  for (const CellComparison& c : r.cells) {
    for (const MetricComparison& m : c.metrics) {
      if (!m.headline.empty()) {
        absl::StrAppend(&changes, "  ", m.headline, "\n    ", m.verdict.headline, "\n    ",
                        c.recipe, "\n");
      } else if (m.verdict.verdict == Verdict::kInconclusive) {
        absl::StrAppend(&inconclusive, "  '", c.label, "' ", m.metric.name, ": needs ~",
                        m.verdict.repeats_needed, " repeats per side; ", m.verdict.headline, "\n");
      }
    }
  }
  std::string outliers;
  for (const CellComparison& c : r.cells) {
    for (const MetricComparison& m : c.metrics) {
      for (const std::string& line : m.outlier_lines) {
        absl::StrAppend(&outliers, "  '", c.label, "' ", line, "\n");
      }
    }
  }
  if (!changes.empty()) absl::StrAppend(&out, "\nchanges:\n", changes);
  if (!outliers.empty()) {
    absl::StrAppend(&out, "\noutliers (set aside by the MAD rule, docs/gating.md):\n", outliers);
  }
  if (!inconclusive.empty()) absl::StrAppend(&out, "\ninconclusive:\n", inconclusive);
  if (!r.unmatched.empty()) {
    absl::StrAppend(&out, "\nunmatched cells (not compared):\n");
    for (const UnmatchedCell& u : r.unmatched) {
      absl::StrAppend(&out, "  ", u.baseline ? "baseline" : "candidate", " cell ", u.index, " '",
                      u.label, "': ", u.reason, "\n");
    }
  }
  if (!r.warnings.empty()) {
    absl::StrAppend(&out, "\nwarnings:\n");
    for (const std::string& w : r.warnings) absl::StrAppend(&out, "  ", w, "\n");
  }
  absl::StrAppend(&out, "\n", StatusWord(r), ": ", CountsLine(r), " (exit ", ExitStatus(r), ")\n");
  return out;
}

std::string RenderMarkdown(const GateReport& r) {
  std::string out =
      absl::StrCat("### blkbench gate: ", MarkdownEscape(r.title), " — **", StatusWord(r), "**\n\n",
                   CountsLine(r), ". ", OptionsLine(r, Comparisons(r)), ".\n\n");
  for (const CellComparison& c : r.cells) {
    for (const MetricComparison& m : c.metrics) {
      if (m.verdict.verdict != Verdict::kRegression) continue;
      absl::StrAppend(&out, "> **", MarkdownEscape(m.headline), "**  \n> ",
                      MarkdownEscape(m.verdict.headline), "  \n> ", MarkdownEscape(c.recipe),
                      "\n\n");
    }
  }
  if (!r.cells.empty()) {
    out +=
        "| cell | metric | baseline | %change | candidate | verdict | CI | p | q | n |\n"
        "|---|---|---:|---:|---:|---|---|---:|---:|---:|\n";
  }
  for (const CellComparison& c : r.cells) {
    for (const MetricComparison& m : c.metrics) {
      const CellVerdict& v = m.verdict;
      const std::string verdict =
          v.verdict == Verdict::kRegression ? "**regression**" : MarkdownEscape(VerdictCell(v));
      absl::StrAppend(&out, "| ", MarkdownEscape(c.label), " | ", MarkdownEscape(m.metric.name),
                      " | ", FormatMetricValue(m.metric, v.base_centre), " ", Spread(v.base_cv),
                      " | ", SignedPercent(v.relative_change), " | ",
                      FormatMetricValue(m.metric, v.cand_centre), " ", Spread(v.cand_cv), " | ",
                      verdict, " | ", Interval(v), " | ", PValue(v.p_value), " | ",
                      PValue(v.q_value), " | ", Repeats(v), " |\n");
    }
  }
  std::string outliers;
  for (const CellComparison& c : r.cells) {
    for (const MetricComparison& m : c.metrics) {
      for (const std::string& line : m.outlier_lines) {
        absl::StrAppend(&outliers, "- '", MarkdownEscape(c.label), "' ", MarkdownEscape(line),
                        "\n");
      }
    }
  }
  if (!outliers.empty()) {
    absl::StrAppend(&out, "\n**Outliers set aside** (MAD rule, docs/gating.md):\n\n", outliers);
  }
  if (!r.unmatched.empty()) {
    absl::StrAppend(&out, "\n<details><summary>", r.unmatched.size(),
                    r.unmatched.size() == 1 ? " unmatched cell" : " unmatched cells",
                    " (not compared)</summary>\n\n");
    for (const UnmatchedCell& u : r.unmatched) {
      absl::StrAppend(&out, "- ", u.baseline ? "baseline" : "candidate", " cell ", u.index, " '",
                      MarkdownEscape(u.label), "': ", MarkdownEscape(u.reason), "\n");
    }
    out += "\n</details>\n";
  }
  return out;
}

}  // namespace blkbench::gate
