// Shared formatting for the gate report renderers; see gate_format.h.
#include "controller/gate/gate_format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/resolved_job.h"
#include "google/protobuf/util/json_util.h"

namespace blkbench::gate {
namespace {

std::string Plural(int n, std::string_view one, std::string_view many) {
  return absl::StrCat(n, " ", std::string(n == 1 ? one : many));
}

// "sim:6.18+plug-batch-retry" -> "sim kernel sim:6.18+plug-batch-retry (engine patches:
// plug-batch-retry)"; real kernels: the releases the runs reported, or the target glob.
std::string KernelFacts(const SideFacts& f) {
  if (IsSimulated(f.target_kernel)) {
    std::vector<std::string> parts = absl::StrSplit(f.target_kernel, '+');
    parts.erase(parts.begin());
    return absl::StrCat("sim kernel ", f.target_kernel,
                        " (engine patches: ", parts.empty() ? "none" : absl::StrJoin(parts, ", "),
                        ")");
  }
  if (!f.kernels.empty()) return absl::StrCat("kernels ", absl::StrJoin(f.kernels, ", "));
  return absl::StrCat("kernel ", f.target_kernel.empty() ? "any" : f.target_kernel);
}

std::string SideRecipe(const SideFacts& f) {
  return absl::StrCat(
      "cell ", f.cell_index, " '", f.label, "', ",
      f.hosts.empty() ? "no host reported" : absl::StrCat("hosts ", absl::StrJoin(f.hosts, ", ")),
      ", ", KernelFacts(f), ", ", f.done_runs, " done runs",
      f.other_runs ? absl::StrCat(" (", f.other_runs, " not done)") : "");
}

}  // namespace

std::string SignedPercent(double fraction) {
  if (std::isnan(fraction)) return "-";
  if (std::isinf(fraction)) return fraction > 0 ? "+inf%" : "-inf%";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", 100.0 * fraction);
  return buf;
}

std::string PlainPercent(double fraction) {
  if (std::isnan(fraction)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100.0 * std::fabs(fraction));
  return buf;
}

std::string Interval(const CellVerdict& v) {
  if (std::isnan(v.ci_low) || std::isnan(v.ci_high)) return "-";
  return absl::StrCat("[", SignedPercent(v.ci_low), ", ", SignedPercent(v.ci_high), "]");
}

std::string PValue(double p) {
  if (std::isnan(p)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2g", p);
  return buf;
}

std::string VerdictCell(const CellVerdict& v) {
  switch (v.verdict) {
    case Verdict::kRegression:
      return "REGRESSION";
    case Verdict::kImprovement:
      return "improvement";
    case Verdict::kNoChange:
      return "no change";
    case Verdict::kInconclusive:
      return absl::StrCat("inconclusive (~", v.repeats_needed, "/side)");
  }
  return "?";
}

std::string ChangeHeadline(const GateReport& report, const CellComparison& cell,
                           const MetricComparison& m) {
  const Verdict v = m.verdict.verdict;
  if (v != Verdict::kRegression && v != Verdict::kImprovement) return "";
  return absl::StrCat("blkbench: ", PlainPercent(m.verdict.relative_change), " ",
                      std::string(VerdictName(v)), " of ", m.metric.name, " on cell '", cell.label,
                      "' (", report.title, ")");
}

std::string ReproductionRecipe(const GateReport& report, const CellComparison& cell) {
  std::string matrix = report.baseline_file.empty() ? "(unnamed)" : report.baseline_file;
  if (report.candidate_file != report.baseline_file) {
    matrix = absl::StrCat(matrix, " vs ",
                          report.candidate_file.empty() ? "(unnamed)" : report.candidate_file);
  }
  return absl::StrCat("reproduce: matrix ", matrix, "; baseline ", SideRecipe(cell.base),
                      "; candidate ", SideRecipe(cell.cand));
}

std::string CountsLine(const GateReport& report) {
  const GateCounts& c = report.counts;
  std::string out = absl::StrCat(Plural(c.regressions, "regression", "regressions"), ", ",
                                 Plural(c.improvements, "improvement", "improvements"), ", ",
                                 c.no_change, " no change, ", c.inconclusive, " inconclusive");
  if (!report.unmatched.empty()) {
    absl::StrAppend(
        &out, "; ",
        Plural(static_cast<int>(report.unmatched.size()), "unmatched cell", "unmatched cells"));
  }
  return out;
}

std::string AlignColumns(const std::vector<std::vector<std::string>>& rows,
                         const std::vector<bool>& right) {
  std::vector<size_t> width;
  for (const auto& row : rows) {
    if (width.size() < row.size()) width.resize(row.size(), 0);
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < width.size(); ++i) {
      const std::string cell = i < row.size() ? row[i] : "";
      const std::string pad(width[i] - cell.size(), ' ');
      if (i) line += "  ";
      const bool r = i < right.size() && right[i];
      line += r ? pad + cell : cell + pad;
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

std::string XmlEscape(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string MarkdownEscape(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '|' || c == '`' || c == '*' || c == '_') out += '\\';
    out += c;
  }
  return out;
}

namespace json {

google::protobuf::Value Num(double x) {
  google::protobuf::Value v;
  if (std::isfinite(x)) {
    v.set_number_value(x);
  } else {
    v.set_null_value(google::protobuf::NullValue::NULL_VALUE);
  }
  return v;
}

google::protobuf::Value Str(std::string_view s) {
  google::protobuf::Value v;
  v.set_string_value(std::string(s));
  return v;
}

google::protobuf::Value Bool(bool b) {
  google::protobuf::Value v;
  v.set_bool_value(b);
  return v;
}

google::protobuf::Value Obj(google::protobuf::Struct s) {
  google::protobuf::Value v;
  *v.mutable_struct_value() = std::move(s);
  return v;
}

std::string Text(const google::protobuf::Struct& root) {
  google::protobuf::util::JsonPrintOptions print;
  print.add_whitespace = true;
  std::string text;
  // Cannot fail: every number is finite (Num) and every string came from std::string.
  (void)google::protobuf::util::MessageToJsonString(root, &text, print);
  return text;
}

}  // namespace json

}  // namespace blkbench::gate
