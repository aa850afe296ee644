// Test helpers: a tiny HTTP GET over a real loopback socket, and a strict parser of the
// Prometheus text exposition format (0.0.4) that reports what it rejects.
#ifndef BLKBENCH_CONTROLLER_METRICS_EXPOSITION_TEST_UTIL_H_
#define BLKBENCH_CONTROLLER_METRICS_EXPOSITION_TEST_UTIL_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace blkbench::testing {

// GET http://127.0.0.1:<port><path>; returns the body of a 200 response, else an error
// naming the status line or the socket call that failed.
absl::StatusOr<std::string> HttpGet(int port, const std::string& path);

struct ExpositionSample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
};

struct Exposition {
  struct Family {
    std::string help;
    std::string type;  // counter, gauge, summary, histogram, untyped
    bool has_help = false;
  };
  std::map<std::string, Family> families;  // by family name
  std::vector<ExpositionSample> samples;

  // Samples named `name` whose labels include every pair of `match`.
  std::vector<ExpositionSample> Find(const std::string& name,
                                     const std::map<std::string, std::string>& match = {}) const;
  // The value of the only such sample; nullopt when there is none or more than one.
  std::optional<double> Value(const std::string& name,
                              const std::map<std::string, std::string>& match = {}) const;
};

// Parses `text`; InvalidArgument naming the line on any syntax error, on a sample whose
// family has no # TYPE before it, or on a # TYPE/# HELP repeated for one family.
absl::StatusOr<Exposition> ParseExposition(const std::string& text);

}  // namespace blkbench::testing

#endif  // BLKBENCH_CONTROLLER_METRICS_EXPOSITION_TEST_UTIL_H_
