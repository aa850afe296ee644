// libFuzzer target: bounded YAML on any bytes. Parse must end (error or tree) without a
// crash, a sanitizer report, or more time and memory than its limits allow; the tree it
// builds must be walkable.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/yaml/yaml.h"

namespace {

size_t Walk(const blkbench::yaml::Node& n, int depth) {
  size_t count = 1;
  if (depth > 64) __builtin_trap();  // the depth limit must hold
  for (const blkbench::yaml::Node& item : n.items()) count += Walk(item, depth + 1);
  for (const auto& [key, value] : n.entries()) {
    count += Walk(key, depth + 1) + Walk(value, depth + 1);
  }
  return count;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  blkbench::yaml::Limits limits;
  limits.max_nodes = 20'000;  // aliases share subtrees: walking counts them again
  const blkbench::yaml::ParseResult r = blkbench::yaml::Parse(text, limits);
  if (r.ok()) (void)Walk(r.root, 0);
  return 0;
}
