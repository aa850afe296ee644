// MakeDeviceModel: builds a preset by kind and applies "<family>.<name>" parameter overrides.
#include <algorithm>
#include <functional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/sim_vocabulary.h"
#include "engine/device/device_model.h"
#include "engine/device/device_presets.h"
#include "engine/device/hdd.h"
#include "engine/device/null_blk.h"
#include "engine/device/ssd.h"

namespace blkbench::engine {
namespace {

// Binds one parameter of common/sim_vocabulary's tables (which give its name, type and
// valid values) to the field of a model config it sets.
struct Param {
  std::string name;
  std::function<void(const ParsedParam&)> set;
};

template <typename T>
Param Uint(std::string name, T* out) {
  return {std::move(name), [out](const ParsedParam& v) { *out = static_cast<T>(v.integer); }};
}

Param Micros(std::string name, SimTime* out) {
  return {std::move(name), [out](const ParsedParam& v) { *out = static_cast<SimTime>(v.integer); }};
}

Param Double(std::string name, double* out) {
  return {std::move(name), [out](const ParsedParam& v) { *out = v.number; }};
}

Param Bool(std::string name, bool* out) {
  return {std::move(name), [out](const ParsedParam& v) { *out = v.flag; }};
}

Param Bytes(std::string name, uint64_t* out) {
  return {std::move(name), [out](const ParsedParam& v) { *out = v.integer; }};
}

std::vector<Param> NullBlkParams(NullBlkConfig* c) {
  return {Uint("submit_queues", &c->submit_queues),
          Uint("hw_queue_depth", &c->hw_queue_depth),
          Uint("irqmode", &c->irqmode),
          Uint("completion_nsec", &c->completion_nsec),
          Uint("blocksize", &c->blocksize),
          Bool("memory_backed", &c->memory_backed),
          // Only blk-mq remains: the bio mode (queue_mode 0/1) was removed in 6.9.
          {"queue_mode", [](const ParsedParam&) {}},
          // Accepted so real and simulated cells share seed 000's device: the model presents
          // kSimulatedDeviceBytes whatever the size, and places no memory on a node.
          {"size", [](const ParsedParam&) {}},
          {"home_node", [](const ParsedParam&) {}}};
}

std::vector<Param> HddParams(HddConfig* c) {
  HddGeometryConfig* g = &c->geometry;
  return {Bytes("capacity", &g->capacity_bytes),
          Uint("rpm", &g->rpm),
          Double("outer_mbps", &g->outer_mbps),
          Double("inner_mbps", &g->inner_mbps),
          Double("track_to_track_us", &g->track_to_track_us),
          Double("mean_seek_us", &g->mean_seek_us),
          Double("full_stroke_us", &g->full_stroke_us),
          Uint("queue_depth", &c->queue_depth),
          Bool("write_cache", &c->write_cache),
          Micros("command_overhead_us", &c->command_overhead)};
}

std::vector<Param> SsdParams(SsdConfig* c) {
  return {Uint("dies", &c->dies),
          Micros("read_us", &c->read_ns),
          Bytes("page_size", &c->page_bytes),
          Micros("ctrl_us", &c->ctrl_ns),
          Double("bus_mbps", &c->bus_mbps),
          Micros("fixed_us", &c->fixed_ns),
          Micros("write_ack_us", &c->write_ack_ns),
          Bytes("write_buffer", &c->write_buffer_bytes),
          Double("program_mbps", &c->program_mbps),
          Uint("queue_depth", &c->queue_depth),
          Uint("hw_queues", &c->hw_queues)};
}

// Applies every entry of `params` to `table`; each key must be "<family>.<name>" of a
// parameter in the vocabulary's table for `family`, with a valid value.
absl::Status Apply(absl::string_view kind, absl::string_view family,
                   const std::map<std::string, std::string>& params,
                   const std::vector<Param>& table) {
  const DeviceFamilyDef* def = FindDeviceFamily(std::string_view(family.data(), family.size()));
  if (def == nullptr) return absl::InternalError(absl::StrCat("no parameter table for ", family));
  const std::string prefix = absl::StrCat(family, ".");
  for (const auto& [key, value] : params) {
    const DeviceParamDef* param = nullptr;
    if (absl::StartsWith(key, prefix)) {
      param = FindDeviceParam(*def, std::string_view(key).substr(prefix.size()));
    }
    if (param == nullptr) {
      std::vector<std::string> known;
      for (const DeviceParamDef& p : def->params) {
        known.push_back(absl::StrCat(prefix, absl::string_view(p.name.data(), p.name.size())));
      }
      return absl::InvalidArgumentError(absl::StrCat("unknown parameter \"", key,
                                                     "\" for device \"", kind,
                                                     "\"; known: ", absl::StrJoin(known, ", ")));
    }
    ParsedParam parsed;
    if (!ParseDeviceParam(*param, value, &parsed)) {
      return absl::InvalidArgumentError(absl::StrCat("device parameter ", key, ": expected ",
                                                     DeviceParamExpected(*param), ", got \"", value,
                                                     "\""));
    }
    const auto bound = std::find_if(table.begin(), table.end(),
                                    [&](const Param& p) { return p.name == param->name; });
    if (bound == table.end()) {
      return absl::InternalError(absl::StrCat("device parameter ", key, " is not bound"));
    }
    bound->set(parsed);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<DeviceModel>> MakeDeviceModel(
    std::string_view kind_in, const std::map<std::string, std::string>& params, uint64_t seed) {
  // Debian's abseil keeps its own string_view type, so convert once at the boundary.
  const absl::string_view kind(kind_in.data(), kind_in.size());
  if (kind == "null_blk") {
    NullBlkConfig c;
    if (absl::Status s = Apply(kind, "null_blk", params, NullBlkParams(&c)); !s.ok()) return s;
    if (absl::Status s = c.Validate(); !s.ok()) return s;
    return std::make_unique<NullBlkModel>(c);
  }
  if (kind == "hdd" || kind == "hdd-seed003") {
    HddConfig c = kind == "hdd" ? HddPreset() : HddSeed003Preset();
    if (absl::Status s = Apply(kind, "hdd", params, HddParams(&c)); !s.ok()) return s;
    if (absl::Status s = c.Validate(); !s.ok()) return s;
    return std::make_unique<HddModel>(c);
  }
  const std::vector<std::pair<absl::string_view, SsdConfig (*)()>> flash = {
      {"ssd", SsdNvmePreset},
      {"ssd-sata", SsdSataPreset},
      {"ssd-seed004", SsdSeed004Preset},
      {"optane", OptaneP4800xPreset},
      {"optane-p5800x", OptaneP5800xPreset}};
  for (const auto& [name, preset] : flash) {
    if (kind != name) continue;
    SsdConfig c = preset();
    const absl::string_view family = absl::StartsWith(kind, "optane") ? "optane" : "ssd";
    if (absl::Status s = Apply(kind, family, params, SsdParams(&c)); !s.ok()) return s;
    if (absl::Status s = c.Validate(); !s.ok()) return s;
    return std::make_unique<SsdModel>(c, seed);
  }
  std::vector<absl::string_view> kinds;
  for (const SimDeviceDef& d : SimDevices()) kinds.emplace_back(d.name.data(), d.name.size());
  return absl::InvalidArgumentError(
      absl::StrCat("unknown device kind \"", kind, "\"; known: ", absl::StrJoin(kinds, ", ")));
}

int TraceMajor(DeviceBus bus) {
  switch (bus) {
    case DeviceBus::kScsi:
      return 8;  // SCSI_DISK0_MAJOR
    case DeviceBus::kNullBlk:
      return 252;
    case DeviceBus::kNvme:
      return 259;  // BLOCK_EXT_MAJOR
  }
  return 0;
}

}  // namespace blkbench::engine
