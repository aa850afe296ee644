// Internal to the gate report: number formatting, headlines, reproduction recipes and an
// aligned text table shared by the text, Markdown, JSON and JUnit renderers.
#ifndef BLKBENCH_CONTROLLER_GATE_GATE_FORMAT_H_
#define BLKBENCH_CONTROLLER_GATE_GATE_FORMAT_H_

#include <string>
#include <string_view>
#include <vector>

#include "controller/gate/gate_report.h"
#include "google/protobuf/struct.pb.h"

namespace blkbench::gate {

std::string SignedPercent(double fraction);     // "+6.5%", "-100.0%", "+inf%", "-" for NaN
std::string PlainPercent(double fraction);      // "6.5%" (magnitude), "-" for NaN
std::string Interval(const CellVerdict& v);     // "[-8.1%, -4.9%]"
std::string PValue(double p);                   // "0.0079", "1"
std::string VerdictCell(const CellVerdict& v);  // "REGRESSION", "inconclusive (~12/side)"

// "blkbench: 6.5% regression of iops on cell 'scheduler=bfq bs=4k' (kernel a -> b)" for
// a regression or improvement; "" for any other verdict.
std::string ChangeHeadline(const GateReport& report, const CellComparison& cell,
                           const MetricComparison& m);

// "reproduce: matrix seeds/003.yaml, cell 'kernel=... bs=4k' (index 3); baseline: ...;
// candidate: ..." naming hosts and kernels seen, or the engine patches of sim: kernels.
std::string ReproductionRecipe(const GateReport& report, const CellComparison& cell);

// "2 regressions, 1 improvement, 5 no change, 0 inconclusive; 1 unmatched cell".
std::string CountsLine(const GateReport& report);

// Columns padded to their widest entry, separated by two spaces; columns flagged in
// `right` are right-aligned. Trailing blanks are trimmed; every line ends with '\n'.
std::string AlignColumns(const std::vector<std::vector<std::string>>& rows,
                         const std::vector<bool>& right);

std::string XmlEscape(std::string_view s);       // & < > " ' as entities
std::string MarkdownEscape(std::string_view s);  // | and ` escaped for table cells

// Building JSON output (the gate's RenderJson, `blkbench bisect --format json`) as a
// protobuf Struct, printed by Text.
namespace json {
google::protobuf::Value Num(double x);  // null for NaN and infinities (JSON has neither)
google::protobuf::Value Str(std::string_view s);
google::protobuf::Value Bool(bool b);
google::protobuf::Value Obj(google::protobuf::Struct s);
template <typename T, typename F>
google::protobuf::Value List(const std::vector<T>& xs, F to_value) {
  google::protobuf::Value v;
  google::protobuf::ListValue* l = v.mutable_list_value();
  for (const T& x : xs) *l->add_values() = to_value(x);
  return v;
}
// Indented JSON text of `root`.
std::string Text(const google::protobuf::Struct& root);
}  // namespace json

}  // namespace blkbench::gate

#endif  // BLKBENCH_CONTROLLER_GATE_GATE_FORMAT_H_
