// Reading the shipped Grafana dashboards for tests: panels, their targets and the
// template variables, from dashboards/*.json (parsed as protobuf Struct).
#ifndef BLKBENCH_TESTS_DASHBOARD_UTIL_H_
#define BLKBENCH_TESTS_DASHBOARD_UTIL_H_

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"

namespace blkbench::testing {

struct Dashboard {
  std::string file;
  google::protobuf::Struct json;

  const google::protobuf::ListValue& Panels() const {
    return json.fields().at("panels").list_value();
  }
  const google::protobuf::ListValue& Variables() const {
    return json.fields().at("templating").struct_value().fields().at("list").list_value();
  }
};

inline std::string Str(const google::protobuf::Struct& s, const std::string& key) {
  auto it = s.fields().find(key);
  return it == s.fields().end() ? "" : it->second.string_value();
}

// Every dashboards/*.json under `source_dir`, sorted by file name; empty on a parse
// error (the caller asserts on the count).
inline std::vector<Dashboard> LoadDashboards(const std::string& source_dir, std::string* error) {
  std::vector<Dashboard> out;
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(source_dir + "/dashboards")) {
    if (e.path().extension() == ".json") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    std::ifstream in(f);
    std::stringstream ss;
    ss << in.rdbuf();
    Dashboard d;
    d.file = f.filename().string();
    auto st = google::protobuf::util::JsonStringToMessage(ss.str(), &d.json);
    if (!st.ok()) {
      *error = d.file + ": " + st.ToString();
      return {};
    }
    out.push_back(std::move(d));
  }
  return out;
}

// Names of the $variables ($name and ${name}) used in `text`.
inline std::set<std::string> VariablesUsed(const std::string& text) {
  static const std::regex kVar(R"(\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?)");
  std::set<std::string> out;
  for (std::sregex_iterator it(text.begin(), text.end(), kVar), end; it != end; ++it) {
    out.insert((*it)[1].str());
  }
  return out;
}

}  // namespace blkbench::testing

#endif  // BLKBENCH_TESTS_DASHBOARD_UTIL_H_
