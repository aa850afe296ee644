// History of one cell's metric across experiments, with E-divisive change points
// (history.h).
#include "controller/gate/history.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/metrics/run_labels.h"
#include "common/resolved_job.h"
#include "controller/gate/change_point.h"
#include "controller/gate/gate_format.h"
#include "controller/gate/gate_metrics.h"
#include "controller/gate/robust.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/message_differencer.h"
#include "workloads/format.h"
#include "workloads/job_options.h"

namespace blkbench::gate {
namespace {

constexpr uint32_t kDefaultMinSegment = 3;
constexpr uint32_t kDefaultPermutations = 199;
constexpr double kDefaultPThreshold = 0.05;

const v1::AxisValue* Axis(const v1::CellSpec& c, const std::string& key) {
  for (const v1::AxisValue& a : c.axes()) {
    if (a.key() == key) return &a;
  }
  return nullptr;
}

// Setting key=value on the cell leaves its job unchanged.
bool AlreadyHas(const v1::CellSpec& cell, const v1::AxisValue& kv) {
  const workloads::OptionDef* def = workloads::FindOption(kv.key());
  if (def == nullptr) return false;
  v1::CellSpec a = cell;
  a.clear_axes();
  a.clear_index();
  v1::CellSpec b = a;
  if (!def->Apply(kv.value(), b)) return false;
  return google::protobuf::util::MessageDifferencer::Equals(a, b);
}

void AddDistinct(std::vector<std::string>& v, const std::string& s) {
  if (!s.empty() && std::find(v.begin(), v.end(), s) == v.end()) v.push_back(s);
}

std::string Date(int64_t unix_ms) {
  char buf[32] = "-";
  const time_t secs = unix_ms / 1000;
  struct tm tm;
  if (unix_ms > 0 && gmtime_r(&secs, &tm)) strftime(buf, sizeof buf, "%Y-%m-%d %H:%M", &tm);
  return buf;
}

}  // namespace

absl::Status CheckHistoryRequest(const v1::GetHistoryRequest& req) {
  if (absl::StatusOr<MetricDef> def = ParseMetric(req.metric()); !def.ok()) return def.status();
  if (req.cell().empty()) {
    return absl::InvalidArgumentError(
        "history: name the cell by its axis values, e.g. bs=4k,iodepth=32");
  }
  for (const v1::AxisValue& kv : req.cell()) {
    if (kv.key().empty()) return absl::InvalidArgumentError("history: a cell key is empty");
  }
  if (req.p_threshold() < 0 || req.p_threshold() >= 1) {
    return absl::InvalidArgumentError("history: p_threshold must be in [0, 1)");
  }
  return absl::OkStatus();
}

bool CellMatches(const v1::CellSpec& cell, const v1::GetHistoryRequest& req) {
  if (!req.device_class().empty() && cell.target().device_class() != req.device_class()) {
    return false;
  }
  for (const v1::AxisValue& kv : req.cell()) {
    const v1::AxisValue* axis = Axis(cell, kv.key());
    if (axis != nullptr && axis->value() == kv.value()) continue;
    if (!AlreadyHas(cell, kv)) return false;
  }
  return true;
}

bool AnyCellMatches(const v1::Experiment& experiment, const v1::GetHistoryRequest& req) {
  if (!req.name().empty() && experiment.name() != req.name()) return false;
  for (const v1::CellSpec& c : experiment.cells()) {
    if (CellMatches(c, req)) return true;
  }
  return false;
}

absl::StatusOr<v1::GetHistoryResponse> BuildHistory(const std::vector<v1::Experiment>& experiments,
                                                    const v1::GetHistoryRequest& req) {
  if (absl::Status s = CheckHistoryRequest(req); !s.ok()) return s;
  const MetricDef def = *ParseMetric(req.metric());
  v1::GetHistoryResponse out;
  out.set_metric(req.metric());
  out.set_higher_is_better(def.direction == Direction::kHigherIsBetter);

  std::vector<const v1::Experiment*> ordered;
  ordered.reserve(experiments.size());
  for (const v1::Experiment& e : experiments) ordered.push_back(&e);
  std::sort(ordered.begin(), ordered.end(), [](const v1::Experiment* a, const v1::Experiment* b) {
    return std::make_pair(a->created_unix_ms(), a->id()) <
           std::make_pair(b->created_unix_ms(), b->id());
  });
  for (const v1::Experiment* e : ordered) {
    if (!req.name().empty() && e->name() != req.name()) continue;
    for (const v1::CellSpec& cell : e->cells()) {
      if (!CellMatches(cell, req)) continue;
      v1::HistoryPoint p;
      p.set_experiment_id(e->id());
      p.set_experiment_name(e->name());
      p.set_created_unix_ms(e->created_unix_ms());
      p.set_cell_index(cell.index());
      p.set_cell_label(workloads::CellLabel(cell));
      p.set_device_class(cell.target().device_class());
      std::vector<std::string> hosts, kernels;
      std::vector<double> values;
      for (const v1::Run& run : e->runs()) {
        if (run.cell_index() != cell.index() || run.state() != v1::RUN_DONE) continue;
        absl::StatusOr<double> v = RunSample(def, run.result());
        if (!v.ok()) {
          out.add_warnings(
              absl::StrCat("experiment ", e->id(), " run ", run.id(), ": ", v.status().message()));
          continue;
        }
        values.push_back(*v);
        AddDistinct(hosts, run.result().host().hostname());
        // Where the kernel came from when it was not the host's own: a guest's package
        // or built image (KernelSourceOf).
        const std::string source = KernelSourceOf(cell, run.result().device());
        AddDistinct(kernels, source == "host" ? run.result().host().kernel_release()
                                              : absl::StrCat(run.result().host().kernel_release(),
                                                             " (", source, ")"));
      }
      if (values.empty()) {
        out.add_warnings(
            absl::StrCat("experiment ", e->id(), " cell ", cell.index(), ": no finished runs"));
        continue;
      }
      const std::string& target = cell.target().kernel();
      if (IsSimulated(target) || kernels.empty()) {
        p.set_kernel(target.empty() ? "any" : target);
      } else {
        p.set_kernel(absl::StrJoin(kernels, ","));
      }
      for (const std::string& h : hosts) p.add_hosts(h);
      for (double v : values) p.add_values(v);
      p.set_median(Median(values));
      p.set_cv(values.size() > 1 ? Cv(values) : 0.0);
      *out.add_points() = std::move(p);
    }
  }

  std::vector<double> series;
  for (const v1::HistoryPoint& p : out.points()) series.push_back(p.median());
  EDivisiveOptions opts;
  opts.min_segment = static_cast<int>(req.min_segment() ? req.min_segment() : kDefaultMinSegment);
  opts.permutations =
      static_cast<int>(req.permutations() ? req.permutations() : kDefaultPermutations);
  opts.p_threshold = req.p_threshold() > 0 ? req.p_threshold() : kDefaultPThreshold;
  opts.seed = req.seed() ? req.seed() : 1;
  const std::vector<ChangePoint> cps = EDivisive(series, opts);
  for (size_t i = 0; i < cps.size(); ++i) {
    const size_t begin = i == 0 ? 0 : cps[i - 1].index;
    const size_t end = i + 1 < cps.size() ? cps[i + 1].index : series.size();
    const std::vector<double> before(series.begin() + static_cast<long>(begin),
                                     series.begin() + static_cast<long>(cps[i].index));
    const std::vector<double> after(series.begin() + static_cast<long>(cps[i].index),
                                    series.begin() + static_cast<long>(end));
    v1::HistoryChangePoint* c = out.add_change_points();
    c->set_index(static_cast<uint32_t>(cps[i].index));
    c->set_experiment_id(out.points(static_cast<int>(cps[i].index)).experiment_id());
    c->set_p_value(cps[i].p_value);
    c->set_statistic(cps[i].statistic);
    c->set_before_median(Median(before));
    c->set_after_median(Median(after));
    c->set_relative_change(c->before_median() != 0 ? c->after_median() / c->before_median() - 1
                                                   : 0.0);
  }
  return out;
}

std::string RenderHistoryText(const v1::GetHistoryResponse& h) {
  absl::StatusOr<MetricDef> def = ParseMetric(h.metric());
  if (!def.ok()) return std::string(def.status().message()) + "\n";
  std::vector<std::vector<std::string>> rows = {
      {"#", "exp", "created (UTC)", "kernel", "cell", "runs", h.metric(), "cv", "change"}};
  for (int i = 0; i < h.points_size(); ++i) {
    const v1::HistoryPoint& p = h.points(i);
    std::string mark;
    for (const v1::HistoryChangePoint& c : h.change_points()) {
      if (static_cast<int>(c.index()) == i) {
        mark = absl::StrCat("<- ", SignedPercent(c.relative_change()), " (p=", PValue(c.p_value()),
                            ")");
      }
    }
    rows.push_back({absl::StrCat(i), absl::StrCat(p.experiment_id()), Date(p.created_unix_ms()),
                    p.kernel(), p.cell_label(), absl::StrCat(p.values_size()),
                    FormatMetricValue(*def, p.median()), PlainPercent(p.cv()), mark});
  }
  std::string out = absl::StrCat(h.metric(), " (", h.higher_is_better() ? "higher" : "lower",
                                 " is better), ", h.points_size(), " points\n");
  out += AlignColumns(rows, {true, true, false, false, false, true, true, true, false});
  if (h.change_points().empty()) {
    out += "no change points";
    if (h.points_size() < 6) out += " (too few points to test)";
    out += "\n";
  }
  for (const v1::HistoryChangePoint& c : h.change_points()) {
    const v1::HistoryPoint& p = h.points(static_cast<int>(c.index()));
    const bool worse = h.higher_is_better() ? c.relative_change() < 0 : c.relative_change() > 0;
    absl::StrAppend(&out, "change point at #", c.index(), " (experiment ", p.experiment_id(),
                    ", kernel ", p.kernel(), "): ", FormatMetricValue(*def, c.before_median()),
                    " -> ", FormatMetricValue(*def, c.after_median()), " (",
                    SignedPercent(c.relative_change()), ", ", worse ? "worse" : "better",
                    "), permutation p=", PValue(c.p_value()), "\n");
  }
  for (const std::string& w : h.warnings()) absl::StrAppend(&out, "warning: ", w, "\n");
  return out;
}

std::string RenderHistoryJson(const v1::GetHistoryResponse& h) {
  google::protobuf::util::JsonPrintOptions print;
  print.add_whitespace = true;
  print.preserve_proto_field_names = true;
  std::string json;
  (void)google::protobuf::util::MessageToJsonString(h, &json, print);
  return json;
}

}  // namespace blkbench::gate
