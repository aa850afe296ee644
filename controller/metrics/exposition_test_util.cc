// HttpGet of a 200 body (common/http) and a strict Prometheus text-format parser, for tests.
#include "controller/metrics/exposition_test_util.h"

#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/http/http_get.h"

namespace blkbench::testing {
namespace {

bool IsNameChar(char c, bool first) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
         (!first && c >= '0' && c <= '9');
}

// Reads a metric or label name at `pos`; empty when there is none.
std::string ReadName(const std::string& line, size_t& pos) {
  size_t start = pos;
  while (pos < line.size() && IsNameChar(line[pos], pos == start)) ++pos;
  return line.substr(start, pos - start);
}

absl::Status LineError(int line_no, const std::string& line, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat("line ", line_no, ": ", what, ": ", line));
}

// Parses {k="v",...} at `pos` (which points at '{').
bool ReadLabels(const std::string& line, size_t& pos, std::map<std::string, std::string>& out) {
  ++pos;
  while (pos < line.size() && line[pos] != '}') {
    std::string key = ReadName(line, pos);
    if (key.empty() || pos + 1 >= line.size() || line[pos] != '=' || line[pos + 1] != '"') {
      return false;
    }
    pos += 2;
    std::string value;
    while (pos < line.size() && line[pos] != '"') {
      if (line[pos] == '\\') {
        if (++pos >= line.size()) return false;
        char c = line[pos];
        if (c == 'n') {
          value.push_back('\n');
        } else if (c == '\\' || c == '"') {
          value.push_back(c);
        } else {
          return false;
        }
      } else {
        value.push_back(line[pos]);
      }
      ++pos;
    }
    if (pos >= line.size()) return false;
    ++pos;  // closing quote
    if (out.count(key)) return false;
    out[key] = value;
    if (pos < line.size() && line[pos] == ',') ++pos;
  }
  if (pos >= line.size()) return false;
  ++pos;  // '}'
  return true;
}

bool ParseValue(const std::string& s, double& out) {
  if (s == "NaN") {
    out = std::nan("");
    return true;
  }
  if (s == "+Inf" || s == "-Inf") {
    out = s[0] == '+' ? HUGE_VAL : -HUGE_VAL;
    return true;
  }
  return absl::SimpleAtod(s, &out);
}

}  // namespace

absl::StatusOr<std::string> HttpGet(int port, const std::string& path) {
  absl::StatusOr<HttpResult> r = blkbench::HttpGet(port, path);
  if (!r.ok()) return r.status();
  if (r->status != 200) {
    return absl::UnavailableError(absl::StrCat("GET ", path, ": HTTP ", r->status, ": ", r->body));
  }
  return std::move(r->body);
}

std::vector<ExpositionSample> Exposition::Find(
    const std::string& name, const std::map<std::string, std::string>& match) const {
  std::vector<ExpositionSample> out;
  for (const ExpositionSample& s : samples) {
    if (s.name != name) continue;
    bool all = true;
    for (const auto& [k, v] : match) {
      auto it = s.labels.find(k);
      if (it == s.labels.end() || it->second != v) all = false;
    }
    if (all) out.push_back(s);
  }
  return out;
}

std::optional<double> Exposition::Value(const std::string& name,
                                        const std::map<std::string, std::string>& match) const {
  std::vector<ExpositionSample> found = Find(name, match);
  if (found.size() != 1) return std::nullopt;
  return found[0].value;
}

absl::StatusOr<Exposition> ParseExposition(const std::string& text) {
  Exposition exp;
  int line_no = 0;
  for (absl::string_view view : absl::StrSplit(text, '\n')) {
    ++line_no;
    std::string line(view);
    if (line.empty()) continue;
    if (line[0] == '#') {
      std::vector<std::string> parts = absl::StrSplit(line, absl::MaxSplits(' ', 3));
      if (parts.size() < 3 || (parts[1] != "HELP" && parts[1] != "TYPE")) continue;  // comment
      Exposition::Family& f = exp.families[parts[2]];
      std::string rest = parts.size() > 3 ? parts[3] : "";
      if (parts[1] == "HELP") {
        if (f.has_help) return LineError(line_no, line, "second # HELP");
        f.has_help = true;
        f.help = rest;
      } else {
        if (!f.type.empty()) return LineError(line_no, line, "second # TYPE");
        if (rest != "counter" && rest != "gauge" && rest != "summary" && rest != "histogram" &&
            rest != "untyped") {
          return LineError(line_no, line, "unknown type");
        }
        f.type = rest;
      }
      continue;
    }
    ExpositionSample sample;
    size_t pos = 0;
    sample.name = ReadName(line, pos);
    if (sample.name.empty()) return LineError(line_no, line, "no metric name");
    if (pos < line.size() && line[pos] == '{' && !ReadLabels(line, pos, sample.labels)) {
      return LineError(line_no, line, "bad label set");
    }
    if (pos >= line.size() || line[pos] != ' ') return LineError(line_no, line, "no value");
    std::vector<std::string> fields = absl::StrSplit(line.substr(pos + 1), ' ');
    if (fields.empty() || fields.size() > 2 || !ParseValue(fields[0], sample.value)) {
      return LineError(line_no, line, "bad value or timestamp");
    }
    // Summaries and histograms expose name_sum, name_count and name_bucket as well.
    auto typed = [&exp](const std::string& name) {
      auto it = exp.families.find(name);
      return it != exp.families.end() && !it->second.type.empty();
    };
    std::string family = sample.name;
    if (!typed(family)) {
      for (const char* suffix : {"_sum", "_count", "_bucket"}) {
        const size_t n = strlen(suffix);
        if (family.size() > n && family.compare(family.size() - n, n, suffix) == 0) {
          family = family.substr(0, family.size() - n);
          break;
        }
      }
    }
    if (!typed(family)) {
      return LineError(line_no, line, "sample without a # TYPE line for its family");
    }
    exp.samples.push_back(std::move(sample));
  }
  return exp;
}

}  // namespace blkbench::testing
