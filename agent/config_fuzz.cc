// libFuzzer target: the agent's configuration reader on any bytes.
#include <cstddef>
#include <cstdint>
#include <string>

#include "agent/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  (void)blkbench::ParseAgentConfig(text, "fuzz.yaml").ok();
  return 0;
}
