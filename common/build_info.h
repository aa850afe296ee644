// The version and git revision blkbench was built from, for --version on the CLI and
// both daemons and for the blkbench_build_info metric. Filled in at build time by
// cmake/build_info.cmake.
#ifndef BLKBENCH_COMMON_BUILD_INFO_H_
#define BLKBENCH_COMMON_BUILD_INFO_H_

#include <string>

namespace blkbench {

const char* BuildVersion();   // "0.2.0", the CMake project version
const char* BuildRevision();  // `git describe --always --dirty`, e.g. "5998e2d1a2b3-dirty"

// "blkbench-agent 0.2.0 (5998e2d1a2b3)" for `program`.
inline std::string VersionLine(const std::string& program) {
  return program + " " + BuildVersion() + " (" + BuildRevision() + ")";
}

}  // namespace blkbench

#endif  // BLKBENCH_COMMON_BUILD_INFO_H_
