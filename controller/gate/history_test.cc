// History across experiments: cell selection by axis values and job keys, points in time
// order, a change point found where an injected slowdown starts, and the renderers.
#include "controller/gate/history.h"

#include "absl/strings/match.h"
#include "controller/gate/rng.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "workloads/job_options.h"

namespace blkbench::gate {
namespace {

v1::CellSpec Cell(uint32_t index, const std::vector<std::pair<std::string, std::string>>& axes,
                  const std::string& device_class = "sim:ssd") {
  v1::CellSpec c = workloads::DefaultCell();
  c.set_index(index);
  c.mutable_target()->set_device_class(device_class);
  for (const auto& [key, value] : axes) {
    EXPECT_TRUE(workloads::FindOption(key)->Apply(value, c)) << key;
    v1::AxisValue* a = c.add_axes();
    a->set_key(key);
    a->set_value(value);
  }
  return c;
}

// Experiment `id` (created at id hours) with cells bs=4k/64k on kernel `kernel`, three
// runs per cell around `iops` (1 % noise).
v1::Experiment Exp(uint64_t id, const std::string& kernel, double iops, Rng& rng) {
  v1::Experiment e;
  e.set_id(id);
  e.set_name("nightly");
  e.set_created_unix_ms(static_cast<int64_t>(id) * 3'600'000);
  for (const char* bs : {"4k", "64k"}) {
    v1::CellSpec c = Cell(static_cast<uint32_t>(e.cells_size()), {{"bs", bs}});
    c.mutable_target()->set_kernel(kernel);
    *e.add_cells() = c;
    for (int r = 0; r < 3; ++r) {
      v1::Run* run = e.add_runs();
      run->set_id(id * 100 + static_cast<uint64_t>(e.runs_size()));
      run->set_cell_index(c.index());
      run->set_state(v1::RUN_DONE);
      run->mutable_result()->set_iops(iops * (1 + 0.01 * rng.Gaussian()));
      run->mutable_result()->mutable_host()->set_hostname("lab-1");
    }
  }
  return e;
}

v1::GetHistoryRequest Request(const std::string& metric, const std::string& key,
                              const std::string& value) {
  v1::GetHistoryRequest req;
  req.set_metric(metric);
  v1::AxisValue* a = req.add_cell();
  a->set_key(key);
  a->set_value(value);
  return req;
}

TEST(History, CellMatchesByAxisOrByJobKey) {
  const v1::CellSpec axis = Cell(0, {{"bs", "4k"}, {"iodepth", "32"}});
  EXPECT_TRUE(CellMatches(axis, Request("iops", "bs", "4k")));
  EXPECT_TRUE(CellMatches(axis, Request("iops", "bs", "4096")));  // same job
  EXPECT_FALSE(CellMatches(axis, Request("iops", "bs", "64k")));
  // bs is not an axis here, but the cell's job has bs=4k (fio's default).
  const v1::CellSpec fixed = Cell(0, {{"iodepth", "32"}});
  EXPECT_TRUE(CellMatches(fixed, Request("iops", "bs", "4k")));
  EXPECT_FALSE(CellMatches(fixed, Request("iops", "iodepth", "8")));
  v1::GetHistoryRequest on_hdd = Request("iops", "bs", "4k");
  on_hdd.set_device_class("sim:hdd");
  EXPECT_FALSE(CellMatches(fixed, on_hdd));
  EXPECT_FALSE(CellMatches(fixed, Request("iops", "no_such_key", "1")));
}

TEST(History, FindsTheKernelWhereThroughputDropped) {
  Rng rng(5);
  std::vector<v1::Experiment> exps;
  // Twelve nightly runs; from kernel 6.8 on, 4k IOPS are 10 % lower. Given out of order.
  for (uint64_t id = 12; id >= 1; --id) {
    const bool slow = id >= 7;
    exps.push_back(Exp(id, absl::StrCat("sim:6.", id), slow ? 90'000 : 100'000, rng));
  }
  absl::StatusOr<v1::GetHistoryResponse> h = BuildHistory(exps, Request("iops", "bs", "4k"));
  ASSERT_TRUE(h.ok()) << h.status();
  ASSERT_EQ(h->points_size(), 12);
  EXPECT_EQ(h->points(0).experiment_id(), 1u);  // oldest first
  EXPECT_EQ(h->points(0).cell_label(), "bs=4k");
  EXPECT_EQ(h->points(0).values_size(), 3);
  EXPECT_EQ(h->points(0).kernel(), "sim:6.1");
  EXPECT_TRUE(h->higher_is_better());
  ASSERT_EQ(h->change_points_size(), 1) << RenderHistoryText(*h);
  const v1::HistoryChangePoint& cp = h->change_points(0);
  EXPECT_EQ(cp.index(), 6u);
  EXPECT_EQ(cp.experiment_id(), 7u);
  EXPECT_LT(cp.p_value(), 0.05);
  EXPECT_NEAR(cp.relative_change(), -0.10, 0.02);

  const std::string text = RenderHistoryText(*h);
  EXPECT_TRUE(absl::StrContains(text, "change point at #6 (experiment 7, kernel sim:6.7)")) << text;
  EXPECT_TRUE(absl::StrContains(text, "worse")) << text;
  google::protobuf::Struct json;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(RenderHistoryJson(*h), &json).ok());
  EXPECT_EQ(json.fields().at("points").list_value().values_size(), 12);
  EXPECT_EQ(json.fields().at("change_points").list_value().values_size(), 1);

  // A flat history has no change point.
  Rng rng2(6);
  std::vector<v1::Experiment> flat;
  for (uint64_t id = 1; id <= 12; ++id) flat.push_back(Exp(id, "sim:6.16", 100'000, rng2));
  EXPECT_EQ(BuildHistory(flat, Request("iops", "bs", "4k"))->change_points_size(), 0);
}

// A real-kernel history says where each kernel came from: the host's own release, or a
// VM guest's Debian package or built image (KernelSourceOf).
TEST(History, NamesWhereEachRealKernelCameFrom) {
  Rng rng(7);
  std::vector<v1::Experiment> exps;
  for (uint64_t id = 1; id <= 3; ++id) {
    exps.push_back(Exp(id, "6.*", 100'000, rng));
    for (v1::CellSpec& c : *exps.back().mutable_cells())
      c.mutable_target()->set_device_class("null_blk");
  }
  for (v1::Run& run : *exps[0].mutable_runs()) {
    run.mutable_result()->mutable_host()->set_kernel_release("6.18.0-host");
  }
  for (v1::Run& run : *exps[1].mutable_runs()) {
    run.mutable_result()->mutable_host()->set_kernel_release("6.1.0-57-amd64");
    v1::VmFacts* vm = run.mutable_result()->mutable_device()->mutable_vm();
    vm->set_name("vm-null_blk");
    vm->set_kernel_package("linux-image-6.1.0-57-amd64");
  }
  for (v1::Run& run : *exps[2].mutable_runs()) {
    run.mutable_result()->mutable_host()->set_kernel_release("6.13.0-rc1");
    v1::VmFacts* vm = run.mutable_result()->mutable_device()->mutable_vm();
    vm->set_name("vm-null_blk");
    vm->set_kernel_sha256("0123456789abcdef0123456789abcdef");
  }
  absl::StatusOr<v1::GetHistoryResponse> h = BuildHistory(exps, Request("iops", "bs", "4k"));
  ASSERT_TRUE(h.ok()) << h.status();
  ASSERT_EQ(h->points_size(), 3);
  EXPECT_EQ(h->points(0).kernel(), "6.18.0-host");
  EXPECT_EQ(h->points(1).kernel(), "6.1.0-57-amd64 (deb:linux-image-6.1.0-57-amd64)");
  EXPECT_EQ(h->points(2).kernel(), "6.13.0-rc1 (image sha256:0123456789ab)");
  const std::string text = RenderHistoryText(*h);
  EXPECT_TRUE(absl::StrContains(text, "deb:linux-image-6.1.0-57-amd64")) << text;
}

TEST(History, RejectsBadRequests) {
  EXPECT_FALSE(CheckHistoryRequest(Request("nope", "bs", "4k")).ok());
  v1::GetHistoryRequest no_cell;
  no_cell.set_metric("iops");
  EXPECT_FALSE(CheckHistoryRequest(no_cell).ok());
  EXPECT_TRUE(CheckHistoryRequest(Request("p99.9", "bs", "4k")).ok());
}

}  // namespace
}  // namespace blkbench::gate
