// Bounded YAML: every piece of user text blkbench reads as YAML (matrices, agent and
// daemon configs, machine profiles) goes through Parse, which builds a small immutable
// tree under hard limits on input size, nesting depth, node count (aliases expanded
// count too) and wall time, so no input — hostile or broken — crashes, hangs or
// allocates without bound.
//
// Why libfyaml and not yaml-cpp: Debian 12's yaml-cpp 0.7.0 allocates without bound on
// some one-byte inputs (the file "," took a controller to the OOM killer; a fuzzer found
// it). libfyaml 0.7.12 passes the YAML test suite, is fuzzed by OSS-Fuzz, exposes an
// event parser (so this file decides how much to build), and limits its own nesting.
// The limits here do not trust the parser: they hold whatever parser is underneath.
#ifndef BLKBENCH_COMMON_YAML_YAML_H_
#define BLKBENCH_COMMON_YAML_YAML_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace blkbench::yaml {

// A place in the text, 1-based. {0, 0} when the parser gave none (an empty value).
struct Mark {
  int line = 0;
  int column = 0;
  bool known() const { return line > 0; }
};

// Hard limits of one Parse. The defaults suit hand-written files; a limit hit is a
// ParseError naming the limit and, where known, the place.
struct Limits {
  size_t max_bytes = 4 << 20;  // input size
  int max_depth = 32;          // nested maps/lists (a matrix needs 4)
  size_t max_nodes = 200'000;  // scalars, maps and lists built, aliases expanded
  size_t max_scalar_bytes = 1 << 20;
  absl::Duration max_time = absl::Seconds(5);
};

// An immutable YAML node. Cheap to copy (shares the subtree). A default-constructed
// Node is "undefined" (a key that is not there): it is falsy and of no type.
class Node {
 public:
  enum class Type { kUndefined, kNull, kScalar, kSequence, kMap };
  using Entry = std::pair<Node, Node>;  // a map's key and value

  Node() = default;

  explicit operator bool() const { return data_ != nullptr; }
  Type type() const { return data_ ? data_->type : Type::kUndefined; }
  bool IsDefined() const { return data_ != nullptr; }
  bool IsNull() const { return type() == Type::kNull; }
  bool IsScalar() const { return type() == Type::kScalar; }
  bool IsSequence() const { return type() == Type::kSequence; }
  bool IsMap() const { return type() == Type::kMap; }

  // A scalar's text (also "" for null and "~" / "null" as written for null).
  const std::string& Scalar() const;
  Mark mark() const { return data_ ? data_->mark : Mark{}; }

  // A list's items; empty for any other type.
  const std::vector<Node>& items() const;
  // A map's entries in file order (repeated keys kept: callers report them); empty for
  // any other type.
  const std::vector<Entry>& entries() const;
  // Items in a list, entries in a map, else 0.
  size_t size() const;

  // The value of the first entry whose key is the scalar `key`; undefined if none or if
  // this is not a map.
  Node operator[](std::string_view key) const;
  // A list's item `i`; undefined when out of range or not a list.
  Node operator[](size_t i) const;

  // "a map", "a list", "a scalar", "nothing": for messages like "expected X, got Y".
  std::string_view Kind() const;

  // Scalar conversions with the whole text consumed; nullopt otherwise (or not scalar).
  std::optional<int64_t> AsInt() const;
  std::optional<double> AsDouble() const;
  std::optional<bool> AsBool() const;  // true/false/yes/no/on/off, any case

 private:
  friend class TreeBuilder;
  struct Data {
    Type type = Type::kNull;
    Mark mark;
    std::string scalar;
    std::vector<Node> items;
    std::vector<Entry> entries;
  };
  explicit Node(std::shared_ptr<const Data> data) : data_(std::move(data)) {}

  std::shared_ptr<const Data> data_;
};

// A parse failure: where (when known) and what.
struct ParseError {
  Mark mark;
  std::string message;
};

// Parses `text` as one YAML document under `limits` and returns its root (a null node for
// empty text). A syntax error, a second document, or a limit hit returns the error with
// its place. Never throws; time and memory are bounded by `limits`. Thread-safe.
struct ParseResult {
  Node root;
  std::optional<ParseError> error;
  bool ok() const { return !error.has_value(); }
};
ParseResult Parse(std::string_view text, const Limits& limits = {});

// Parse for callers that want a Status: InvalidArgument "SOURCE:LINE:COL: message" (or
// "SOURCE: message" without a place) on failure.
absl::StatusOr<Node> ParseOrStatus(std::string_view text, std::string_view source,
                                   const Limits& limits = {});

}  // namespace blkbench::yaml

#endif  // BLKBENCH_COMMON_YAML_YAML_H_
