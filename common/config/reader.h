// A table-driven reader of configuration maps over the bounded YAML tree
// (common/yaml/yaml.h). A map is a Table of Fields — a name, what is expected there (one
// line: "an integer from 1 to 64"), and how the value is read into a member of the target
// struct — and every problem is reported the same way and all at once:
//
//   agent.yaml:12:14: vm_hosts[0].vcpus: expected an integer from 1 to 64, got '0'
//   agent.yaml:13:7: vm_hosts[0]: unknown key 'vcpu' (did you mean 'vcpus'?); valid keys: ...
//   agent.yaml:9:5: vm_hosts[0]: key 'kernel' is required (expected a kernel spec ...)
//
// Unknown keys get did-you-mean and the keys allowed there; required keys, repeated keys,
// non-scalar keys and (UniqueKey) repeated items in lists are errors. A value that is
// missing (`key:` alone) is reported at its key. Warnings are kept apart from errors.
//
// Usage, with the field kinds of common/config/fields.h (tables are built once, e.g. as
// function-local statics):
//
//   struct Disk { std::string kind; uint64_t size_bytes = 1 << 30; };
//   const Table<Disk> kDisk("a disk like {kind: nvme, size: 1G}",
//                           {Enum("kind", &Disk::kind, {"nvme", "hdd"}).Required(),
//                            Bytes("size", "a size like 1G, at least 1M", &Disk::size_bytes,
//                                  1 << 20, UINT64_MAX)});
//   Diagnostics diagnostics("agent.yaml");
//   Disk disk;
//   ReadDocument(root, kDisk, disk, diagnostics);  // then diagnostics.ToStatus()
//
// Not thread-safe per read (one Diagnostics and Context per read); Tables are immutable
// once built and may be shared.
#ifndef BLKBENCH_COMMON_CONFIG_READER_H_
#define BLKBENCH_COMMON_CONFIG_READER_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "common/yaml/yaml.h"

namespace blkbench::config {

// The errors and warnings of one read, shown in file order as
// "FILE:LINE:COL: KEY.PATH: message" ("FILE: ..." where the place is unknown).
class Diagnostics {
 public:
  // At most this many errors are shown; the rest are counted.
  static constexpr size_t kMaxShown = 50;

  explicit Diagnostics(std::string file) : file_(std::move(file)) {}

  // `path` may be "" (the top level). An identical line is kept once.
  void AddError(yaml::Mark at, std::string_view path, std::string_view message);
  void AddWarning(yaml::Mark at, std::string_view path, std::string_view message);

  bool has_errors() const { return !errors_.empty(); }
  // OK without errors; else InvalidArgument with one line per error, in file order.
  absl::Status ToStatus() const;
  // One line per warning, in file order.
  std::vector<std::string> Warnings() const;

 private:
  struct Line {
    yaml::Mark at;
    std::string text;
  };
  std::string Render(yaml::Mark at, std::string_view path, std::string_view message) const;

  std::string file_;
  std::vector<Line> errors_;
  std::vector<Line> warnings_;
};

// Where a read is: its Diagnostics and the key path of the value being read
// ("vm_hosts[0].disks[1].size"). Every field reader and hook gets one.
class Context {
 public:
  explicit Context(Diagnostics& diagnostics) : diagnostics_(diagnostics) {}
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  // The current key path; "" at the top level.
  const std::string& path() const { return path_; }

  // An error or warning about `at` under the current path. A node without a place of
  // its own (a missing value) is reported where the current key or item is.
  void Error(const yaml::Node& at, std::string_view message);
  void Warning(const yaml::Node& at, std::string_view message);
  // "expected EXPECTED, got 'TEXT'" (or "got a map", "got nothing"), then "; DETAIL".
  void Expected(const yaml::Node& value, std::string_view expected, absl::string_view detail = "");

  // Extends the path by a map key or a list index while the Scope lives; `where` is the
  // place of the key or item, for values that have none.
  class [[nodiscard]] Scope {
   public:
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;
    ~Scope();

   private:
    friend class Context;
    Scope(Context& context, size_t path_size) : context_(context), path_size_(path_size) {}
    Context& context_;
    size_t path_size_;
  };
  Scope Key(std::string_view key, const yaml::Node& where);
  Scope Index(size_t index, const yaml::Node& where);

 private:
  yaml::Mark PlaceOf(const yaml::Node& at) const;

  Diagnostics& diagnostics_;
  std::string path_;
  std::vector<yaml::Mark> places_;  // of the keys and items entered
};

// "'text'" for a scalar (long ones cut), else "a map", "a list", "nothing".
std::string Got(const yaml::Node& value);

// A check of a scalar's text after it was read: OK, or an error whose message (may be
// "") says why, appended to "expected ..., got '...'".
using Check = std::function<absl::Status(const std::string& text)>;

// One key of a map and how to read it into a T.
template <typename T>
struct Field {
  std::string name;
  std::string expected;  // completes "expected ...": "an absolute path"
  bool required = false;
  // Reads `value` (a node of any type, null when missing) into `out` and reports through
  // the context, whose path is this field's. True when the value was read as a scalar
  // and stored, so `check` may run.
  std::function<bool(const yaml::Node& value, T& out, Context& context)> read;
  Check check;

  Field Required() && {
    required = true;
    return std::move(*this);
  }
  // Adds a check of the scalar's text (e.g. a pattern): `f` returns bool or absl::Status.
  template <typename F>
  Field Checked(F f) && {
    if constexpr (std::is_same_v<std::invoke_result_t<F, const std::string&>, bool>) {
      check = [f = std::move(f)](const std::string& text) {
        return f(text) ? absl::OkStatus() : absl::InvalidArgumentError("");
      };
    } else {
      check = std::move(f);
    }
    return std::move(*this);
  }
};

// The non-template work of Table::Read: walks `map`, reports unknown, repeated and
// non-scalar keys and missing required ones, and calls `read_field(index, value)` with
// the context scoped to each known key.
struct FieldInfo {
  std::string_view name;
  std::string_view expected;
  bool required;
};
void ReadMap(const yaml::Node& map, const std::vector<FieldInfo>& fields, Context& context,
             absl::FunctionRef<void(size_t field, const yaml::Node& value)> read_field);

// A map's fields, plus an optional hook run after they are read.
template <typename T>
class Table {
 public:
  // After the fields: cross-field checks and derived values. `map` is the node read
  // (null for a missing map section).
  using Hook = std::function<void(T& out, const yaml::Node& map, Context& context)>;

  // `expected` describes the whole map: "a VM host like {name: k612, kernel: deb:6.12*}".
  Table(std::string expected, std::vector<Field<T>> fields, Hook after_read = nullptr)
      : expected_(std::move(expected)),
        fields_(std::move(fields)),
        after_read_(std::move(after_read)) {}

  const std::string& expected() const { return expected_; }

  // Reads `map` into `out`. A null `map` reads as an empty one (then required keys are
  // missing); any other non-map is one error and `out` is left alone.
  void Read(const yaml::Node& map, T& out, Context& context) const {
    if (!map.IsMap() && !map.IsNull()) {
      context.Expected(map, expected_);
      return;
    }
    std::vector<FieldInfo> infos;
    infos.reserve(fields_.size());
    for (const Field<T>& f : fields_) infos.push_back({f.name, f.expected, f.required});
    ReadMap(map, infos, context, [&](size_t i, const yaml::Node& value) {
      const Field<T>& f = fields_[i];
      if (!f.read(value, out, context) || !f.check) return;
      if (absl::Status s = f.check(value.Scalar()); !s.ok()) {
        context.Expected(value, f.expected, s.message());
      }
    });
    if (after_read_) after_read_(out, map, context);
  }

 private:
  std::string expected_;
  std::vector<Field<T>> fields_;
  Hook after_read_;
};

// Reads a whole document, which must be a map (an empty file is an error too).
template <typename T>
void ReadDocument(const yaml::Node& root, const Table<T>& table, T& out, Diagnostics& diagnostics) {
  Context context(diagnostics);
  if (!root.IsMap()) {
    context.Expected(root, table.expected());
    return;
  }
  table.Read(root, out, context);
}

}  // namespace blkbench::config

#endif  // BLKBENCH_COMMON_CONFIG_READER_H_
