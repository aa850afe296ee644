// Writing YAML scalars that read back as the text they were given, in any YAML 1.1 or
// 1.2 reader (the project's libfyaml one, PyYAML, yq): what `blkbench import` emits.
#ifndef BLKBENCH_WORKLOADS_YAML_SCALAR_H_
#define BLKBENCH_WORKLOADS_YAML_SCALAR_H_

#include <string>
#include <string_view>

namespace blkbench::workloads {

// What the reader is meant to see in a scalar.
enum class ScalarKind {
  // Text: a name, a description, a device class, a kernel release. A word YAML 1.1
  // reads as a number (32, 6.10, 0x1f, 1e3, 2024-01-01) is quoted, or "6.10" becomes 6.1.
  kString,
  // A matrix key's value, which the matrix reader parses from its text itself: a plain
  // decimal stays plain (iodepth: 32).
  kOptionValue,
};

// `v` as a block-context YAML scalar (a mapping value, a key, a list item): plain when
// every YAML reader reads it back unchanged, else double-quoted with escapes. Quoted:
// the empty string; the null, boolean and special words of YAML 1.1 and 1.2 in any case
// (null, ~, true, false, yes, no, on, off, y, n, .inf, .nan, <<, =); numbers when
// `kind` is kString (otherwise all but plain decimals); a leading indicator (- ? : , [ ] { } # & *
// ! | > ' " % @ `) or space; ": " or " #" anywhere, a trailing ':' or space; tabs and control
// characters.
std::string YamlScalar(std::string_view v, ScalarKind kind = ScalarKind::kString);

}  // namespace blkbench::workloads

#endif  // BLKBENCH_WORKLOADS_YAML_SCALAR_H_
