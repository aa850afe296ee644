// Matrix files: parse a YAML experiment matrix (fio job options + block-layer axes)
// and expand it into CellSpecs, reporting every mistake with FILE:LINE:COL.
// Functions are thread-safe.
//
//   name: quickstart                  # required
//   description: ...                  # optional
//   repeats: 2                        # each cell runs this often (default 1)
//   job: {rw: randread, iodepth: 32, direct: 1, ioengine: io_uring, runtime: 2s}
//   matrix: {scheduler: [none, mq-deadline], bs: [4k, 64k]}
//   target: {device_class: loop, kernel: "6.*"}   # device_class required
//   device: {null_blk: {submit_queues: 128, irqmode: 0}}
//
// job: takes fio options and block-layer keys (job_options.h has the table), target:
// takes device_class and kernel, matrix: takes either. A list anywhere is an axis;
// matrix: values are always axes. A key may be set in one place only.
#ifndef BLKBENCH_WORKLOADS_MATRIX_H_
#define BLKBENCH_WORKLOADS_MATRIX_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "blkbench/v1/workload.pb.h"
#include "common/sim_vocabulary.h"

namespace blkbench::workloads {

// Most repeats a matrix may ask for per cell.
inline constexpr uint32_t kMaxRepeats = 1000;

struct Matrix {
  std::string name;
  std::string description;
  std::string file_name;  // as passed to ParseMatrix, used in messages
  uint32_t repeats = 1;
  // The list-valued keys, as written, in file order (null_blk parameters as
  // "null_blk.<param>").
  std::vector<std::string> axes;
  // The cartesian product of the axes: cells[i].index() == i, the first axis varies
  // slowest, and each cell's axes() hold the key and the value as written.
  std::vector<v1::CellSpec> cells;
  // "FILE:LINE:COL: warning: ..." lines for things that are allowed but likely not meant
  // (a patch flag that changes none of a cell's scheduler); print them, run anyway.
  std::vector<std::string> warnings;
  // The machine profile files the matrix names by path, as read (path as written -> YAML):
  // what `blkbench submit` sends along, since no controller or agent opens such a path.
  std::map<std::string, std::string> machine_files;
};

// Most bytes a machine profile carried with a matrix may have, and most such files.
inline constexpr size_t kMaxMachineFileBytes = kMaxMachineProfileBytes;
inline constexpr size_t kMaxMachineFiles = 16;

// Reads the machine profile file a matrix names by path (`target.machine` containing '/'
// or ending in .yaml). Only the CLI reads local files; the controller reads what the CLI
// attached. An error is reported at the value's place in the matrix.
using MachineFileReader = std::function<absl::StatusOr<std::string>(const std::string& path)>;

struct ParseOptions {
  // Null: machine profile paths are refused (nothing opens them).
  MachineFileReader read_machine_file;
};

// A MachineFileReader over the local file system, for the CLI acting as its user: a
// regular file only (no device, FIFO or /proc file), at most kMaxMachineFileBytes.
absl::StatusOr<std::string> ReadLocalMachineFile(const std::string& path);

// A MachineFileReader over files that came with a submission (path -> YAML).
MachineFileReader AttachedMachineFiles(std::map<std::string, std::string> files);

// Parses matrix YAML `text`; `file_name` only labels messages. On success returns
// the expanded matrix. On any mistake returns InvalidArgument whose message has one
// line per problem found (all of them, not just the first), each
// "FILE:LINE:COL: what is wrong", lines and columns 1-based. Never throws.
// Every cell whose machine names a file carries that file's YAML (target.machine_profile),
// read through `options.read_machine_file`.
absl::StatusOr<Matrix> ParseMatrix(std::string_view text, std::string_view file_name,
                                   const ParseOptions& options = {});

// The contents of matrix file `path`. NotFound naming the path when it does not exist,
// another errno-derived error when it cannot be read, InvalidArgument when it is larger
// than a matrix may be.
absl::StatusOr<std::string> ReadMatrixFile(const std::string& path);

// ParseMatrix(ReadMatrixFile(path), path) with machine files read by ReadLocalMachineFile,
// or ReadMatrixFile's error.
absl::StatusOr<Matrix> ParseMatrixFile(const std::string& path);

}  // namespace blkbench::workloads

#endif  // BLKBENCH_WORKLOADS_MATRIX_H_
