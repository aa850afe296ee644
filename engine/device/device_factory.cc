// MakeDeviceModel: builds a preset by kind and applies "<family>.<name>" parameter overrides.
#include <cmath>
#include <functional>
#include <limits>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/device/device_model.h"
#include "engine/device/device_presets.h"
#include "engine/device/hdd.h"
#include "engine/device/null_blk.h"
#include "engine/device/ssd.h"

namespace blkbench::engine {
namespace {

// One settable parameter: its name after the family prefix, what a valid value looks like
// (for the error message) and a parser that stores it, returning false on a bad value.
struct Param {
  std::string name;
  std::string want;
  std::function<bool(absl::string_view)> set;
};

template <typename T>
Param Uint(std::string name, T* out) {
  return {std::move(name), "an unsigned integer", [out](absl::string_view v) {
            uint64_t x;
            if (!absl::SimpleAtoi(v, &x) || x > std::numeric_limits<T>::max()) return false;
            *out = static_cast<T>(x);
            return true;
          }};
}

Param Micros(std::string name, SimTime* out) {
  return {std::move(name), "microseconds (>= 0, fractions allowed)", [out](absl::string_view v) {
            double x;
            if (!absl::SimpleAtod(v, &x) || !(x >= 0) || x > 1e9) return false;
            *out = static_cast<SimTime>(std::llround(x * 1e3));
            return true;
          }};
}

Param Double(std::string name, double* out) {
  return {std::move(name), "a number", [out](absl::string_view v) {
            double x;
            if (!absl::SimpleAtod(v, &x) || !std::isfinite(x)) return false;
            *out = x;
            return true;
          }};
}

Param Bool(std::string name, bool* out) {
  return {std::move(name), "0, 1, true or false",
          [out](absl::string_view v) { return absl::SimpleAtob(v, out); }};
}

// Bytes with an optional binary suffix: 4096, 8K, 64MiB, 1T.
Param Bytes(std::string name, uint64_t* out) {
  return {std::move(name), "a size such as 4096, 8K, 64M or 1T", [out](absl::string_view v) {
            std::string s = absl::AsciiStrToUpper(v);
            if (absl::EndsWith(s, "IB")) s.resize(s.size() - 2);
            uint64_t mult = 1;
            if (!s.empty()) {
              const size_t shift = absl::string_view("KMGT").find(s.back());
              if (shift != absl::string_view::npos) {
                mult = uint64_t{1} << (10 * (shift + 1));
                s.pop_back();
              }
            }
            uint64_t x;
            if (!absl::SimpleAtoi(s, &x)) return false;
            if (x != 0 && mult > std::numeric_limits<uint64_t>::max() / x) return false;
            *out = x * mult;
            return true;
          }};
}

std::vector<Param> NullBlkParams(NullBlkConfig* c) {
  return {Uint("submit_queues", &c->submit_queues),
          Uint("hw_queue_depth", &c->hw_queue_depth),
          Uint("irqmode", &c->irqmode),
          Uint("completion_nsec", &c->completion_nsec),
          Uint("blocksize", &c->blocksize),
          Bool("memory_backed", &c->memory_backed),
          // Only blk-mq remains: the bio mode (queue_mode 0/1) was removed in 6.9.
          {"queue_mode", "2 (blk-mq)", [](absl::string_view v) { return v == "2"; }}};
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

// Applies every entry of `params` to `table`; each key must be "<family>.<known name>".
absl::Status Apply(absl::string_view kind, absl::string_view family,
                   const std::map<std::string, std::string>& params,
                   const std::vector<Param>& table) {
  for (const auto& [key, value] : params) {
    const std::string prefix = absl::StrCat(family, ".");
    const Param* param = nullptr;
    if (absl::StartsWith(key, prefix)) {
      const absl::string_view name = absl::string_view(key).substr(prefix.size());
      for (const Param& p : table) {
        if (p.name == name) param = &p;
      }
    }
    if (param == nullptr) {
      std::vector<std::string> known;
      for (const Param& p : table) known.push_back(absl::StrCat(prefix, p.name));
      return absl::InvalidArgumentError(absl::StrCat("unknown parameter \"", key,
                                                     "\" for device \"", kind,
                                                     "\"; known: ", absl::StrJoin(known, ", ")));
    }
    if (!param->set(value)) {
      return absl::InvalidArgumentError(absl::StrCat("device parameter ", key, ": expected ",
                                                     param->want, ", got \"", value, "\""));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckDeviceParam(std::string_view family_in, std::string_view name_in,
                              std::string_view value_in) {
  const absl::string_view family(family_in.data(), family_in.size());
  const std::map<std::string, std::string> one = {
      {absl::StrCat(family, ".", absl::string_view(name_in.data(), name_in.size())),
       std::string(value_in)}};
  if (family == "null_blk") {
    NullBlkConfig c;
    return Apply(family, family, one, NullBlkParams(&c));
  }
  if (family == "hdd") {
    HddConfig c = HddPreset();
    return Apply(family, family, one, HddParams(&c));
  }
  if (family == "ssd" || family == "optane") {
    SsdConfig c = SsdNvmePreset();
    return Apply(family, family, one, SsdParams(&c));
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown device family \"", family, "\"; known: null_blk, hdd, ssd, optane"));
}

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
  return absl::InvalidArgumentError(
      absl::StrCat("unknown device kind \"", kind,
                   "\"; known: null_blk, hdd, hdd-seed003, ssd, ssd-sata, ssd-seed004, optane, "
                   "optane-p5800x"));
}

}  // namespace blkbench::engine
