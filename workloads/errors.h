// Collects every error found in one matrix file and renders them as
// "FILE:LINE:COL: message" lines inside one InvalidArgument status; warnings (which do
// not fail the parse) render as "FILE:LINE:COL: warning: message".
#ifndef BLKBENCH_WORKLOADS_ERRORS_H_
#define BLKBENCH_WORKLOADS_ERRORS_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"

namespace blkbench::workloads {

// A 1-based place in the file (common/yaml marks are 1-based too).
struct Position {
  int line = 1;
  int column = 1;
  friend bool operator==(const Position&, const Position&) = default;
  // NOLINTNEXTLINE(modernize-use-nullptr): clang-tidy misreads the defaulted <=>'s 0.
  friend auto operator<=>(const Position&, const Position&) = default;
};

// Not thread-safe; one per parse.
class ErrorList {
 public:
  // At most this many errors are printed; the rest are counted.
  static constexpr size_t kMaxShown = 50;

  explicit ErrorList(std::string file_name) : file_name_(std::move(file_name)) {}

  // Records an error at `pos`. An identical (position, message) pair is kept once.
  void Add(Position pos, std::string message);

  // Records a warning at `pos`, kept once like errors. Warnings never make ToStatus fail.
  void AddWarning(Position pos, std::string message);

  bool empty() const { return errors_.empty(); }
  size_t size() const { return errors_.size(); }

  // OK when empty; otherwise InvalidArgument with one "FILE:LINE:COL: message" line
  // per error, in file order.
  absl::Status ToStatus() const;

  // One "FILE:LINE:COL: warning: message" line per warning, in file order.
  std::vector<std::string> Warnings() const;

 private:
  std::string file_name_;
  std::vector<std::pair<Position, std::string>> errors_;
  std::vector<std::pair<Position, std::string>> warnings_;
};

}  // namespace blkbench::workloads

#endif  // BLKBENCH_WORKLOADS_ERRORS_H_
