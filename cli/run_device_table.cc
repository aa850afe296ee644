// The device table `blkbench run` prints after its results; see run_device_table.h.
#include "cli/run_device_table.h"

#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cli/format.h"
#include "cli/run_vm.h"
#include "workloads/format.h"

namespace blkbench {

// The block layer's and the device's own account of each run: diskstats over the run
// (iostat -x) and, for `trace: 1` cells, the tracepoint summary (seed 001's metric).
// A run in a guest also says which kernel served it and whether its timings are
// hardware's (kvm) or emulated (tcg).
void PrintDeviceTable(const v1::GetResultsResponse& results, std::ostream& out) {
  bool traced = false, in_vm = false, tcg = false;
  for (const v1::ResultRow& row : results.rows()) {
    traced |= row.run().result().internals().count("seq_ratio") > 0;
    const v1::DeviceFacts& device = row.run().result().device();
    in_vm |= device.has_vm();
    tcg |= device.has_vm() && device.vm().accel() == "tcg";
  }
  std::vector<std::string> header = {"run", "axes", "device"};
  if (in_vm) {
    header.emplace_back("kernel");
    header.emplace_back("virt");
  }
  for (const char* h : {"util%", "aqu-sz", "r_await_ms", "w_await_ms", "rrqm", "wrqm"}) {
    header.emplace_back(h);
  }
  if (traced) {
    for (const char* h : {"seq_ratio", "inflight_mean", "inflight_max", "inversions", "merges",
                          "splits", "requeues"}) {
      header.emplace_back(h);
    }
  }
  TextTable t(header);
  auto fixed = [](double v, int digits) {
    char buf[32];
    snprintf(buf, sizeof(buf), "%.*f", digits, v);
    return std::string(buf);
  };
  for (const v1::ResultRow& row : results.rows()) {
    if (row.run().state() != v1::RUN_DONE) continue;
    const v1::RunResult& r = row.run().result();
    const v1::DeviceStats& d = r.device_stats();
    std::vector<std::string> cells = {absl::StrCat(row.run().id()),
                                      workloads::CellLabel(row.cell()), row.run().device_path()};
    if (in_vm) {
      const bool vm = r.device().has_vm();
      cells.push_back(vm ? r.device().vm().release() : r.host().kernel_release());
      cells.push_back(vm ? r.device().vm().accel() : "-");
    }
    if (r.has_device_stats()) {
      for (const std::string& v :
           {fixed(d.util_pct(), 1), fixed(d.aqu_sz(), 2), fixed(d.r_await_ms(), 3),
            fixed(d.w_await_ms(), 3), absl::StrCat(d.reads_merged()),
            absl::StrCat(d.writes_merged())}) {
        cells.push_back(v);
      }
    } else {
      cells.insert(cells.end(), 6, "-");  // a regular file has no device counters
    }
    if (traced) {
      auto get = [&r](const std::string& key) -> std::string {
        auto it = r.internals().find(key);
        if (it == r.internals().end()) return "-";
        const int digits = key == "seq_ratio" ? 3 : key == "device.inflight_mean" ? 2 : 0;
        char buf[32];
        snprintf(buf, sizeof(buf), "%.*f", digits, it->second);
        return buf;
      };
      for (const char* key :
           {"seq_ratio", "device.inflight_mean", "trace.inflight_max", "trace.inversions",
            "trace_merged", "trace.splits", "dispatch.requeues"}) {
        cells.push_back(get(key));
      }
    }
    t.AddRow(cells);
  }
  out << "\nthe device during each run (/proc/diskstats"
      << (traced ? "; block-layer tracepoints for trace: 1 cells" : "") << ")\n"
      << t.ToString();
  if (tcg) out << kTcgCaveat << "\n";
}

}  // namespace blkbench
