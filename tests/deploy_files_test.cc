// Structure of the shipped deployment files, without Grafana or Docker: dashboards
// (unique panel ids, every datasource provisioned, every variable defined, layout on
// Grafana's 24-column grid), the Grafana provisioning, the docker-compose file (every
// mounted path exists in the repo and lands where the provisioning expects it) and the
// Prometheus configurations (promtool check config, when installed).
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "absl/strings/str_replace.h"
#include "common/bounded_file.h"
#include "common/yaml/yaml.h"
#include "gtest/gtest.h"
#include "tests/dashboard_util.h"

namespace blkbench {
namespace {

using google::protobuf::Struct;
using google::protobuf::Value;
using testing::Dashboard;
using testing::Str;

const std::string kSource = BLKBENCH_SOURCE_DIR;
// Grafana's global variables a dashboard may use without defining them.
const std::set<std::string> kBuiltins = {
    "__rate_interval", "__range", "__interval", "__interval_ms", "__from", "__to", "__name"};

std::vector<Dashboard> Dashboards() {
  std::string error;
  std::vector<Dashboard> d = testing::LoadDashboards(kSource, &error);
  EXPECT_TRUE(error.empty()) << error;
  return d;
}

// A shipped YAML file, parsed as every user file is (common/yaml).
yaml::Node LoadYamlFile(const std::string& path) {
  absl::StatusOr<std::string> text = ReadBoundedRegularFile(path, 1 << 20, "file");
  EXPECT_TRUE(text.ok()) << text.status();
  if (!text.ok()) return yaml::Node();
  absl::StatusOr<yaml::Node> node = yaml::ParseOrStatus(*text, path);
  EXPECT_TRUE(node.ok()) << node.status();
  return node.ok() ? *node : yaml::Node();
}

std::map<std::string, std::string> ProvisionedDatasources() {  // uid -> type
  yaml::Node y = LoadYamlFile(kSource + "/dashboards/provisioning/datasources/blkbench.yaml");
  std::map<std::string, std::string> out;
  for (const yaml::Node& ds : y["datasources"].items()) {
    out[ds["uid"].Scalar()] = ds["type"].Scalar();
  }
  return out;
}

TEST(DashboardsTest, TheFiveDashboardsExistWithUniqueUids) {
  std::set<std::string> uids, files;
  for (const Dashboard& d : Dashboards()) {
    EXPECT_TRUE(uids.insert(Str(d.json, "uid")).second) << d.file;
    EXPECT_FALSE(Str(d.json, "title").empty()) << d.file;
    files.insert(d.file);
  }
  EXPECT_EQ(files, (std::set<std::string>{"compare.json", "engine-internals.json", "fleet.json",
                                          "live-experiment.json", "results.json"}));
}

TEST(DashboardsTest, PanelIdsAreUniqueAndPanelsFitTheGrid) {
  for (const Dashboard& d : Dashboards()) {
    std::set<double> ids;
    ASSERT_GT(d.Panels().values_size(), 0) << d.file;
    for (const Value& pv : d.Panels().values()) {
      const Struct& p = pv.struct_value();
      const std::string where = d.file + " / " + Str(p, "title");
      EXPECT_TRUE(ids.insert(p.fields().at("id").number_value()).second) << where << ": id reused";
      EXPECT_FALSE(Str(p, "title").empty()) << d.file;
      EXPECT_FALSE(Str(p, "description").empty()) << where << ": no description";
      const auto& pos = p.fields().at("gridPos").struct_value().fields();
      EXPECT_GE(pos.at("w").number_value(), 1) << where;
      EXPECT_LE(pos.at("x").number_value() + pos.at("w").number_value(), 24) << where;
      EXPECT_GT(p.fields().at("targets").list_value().values_size(), 0) << where << ": no query";
    }
  }
}

TEST(DashboardsTest, EveryDatasourceReferenceIsProvisioned) {
  const std::map<std::string, std::string> provisioned = ProvisionedDatasources();
  auto check = [&](const Struct& ds, const std::string& where) {
    const std::string uid = Str(ds, "uid");
    ASSERT_TRUE(provisioned.count(uid)) << where << ": datasource '" << uid << "' not provisioned";
    EXPECT_EQ(provisioned.at(uid), Str(ds, "type")) << where;
  };
  for (const Dashboard& d : Dashboards()) {
    for (const Value& pv : d.Panels().values()) {
      const Struct& p = pv.struct_value();
      const std::string where = d.file + " / " + Str(p, "title");
      check(p.fields().at("datasource").struct_value(), where);
      for (const Value& t : p.fields().at("targets").list_value().values()) {
        check(t.struct_value().fields().at("datasource").struct_value(), where);
      }
    }
    for (const Value& v : d.Variables().values()) {
      const Struct& var = v.struct_value();
      if (var.fields().count("datasource")) {
        check(var.fields().at("datasource").struct_value(), d.file + " / $" + Str(var, "name"));
      }
    }
  }
}

TEST(DashboardsTest, EveryVariableUsedIsDefinedBeforeUse) {
  for (const Dashboard& d : Dashboards()) {
    std::set<std::string> defined;
    for (const Value& v : d.Variables().values()) {
      const Struct& var = v.struct_value();
      // A variable's own query may use only the variables defined before it.
      for (const std::string& used : testing::VariablesUsed(Str(var, "definition"))) {
        EXPECT_TRUE(defined.count(used) || kBuiltins.count(used))
            << d.file << ": variable " << Str(var, "name") << " uses $" << used;
      }
      EXPECT_TRUE(defined.insert(Str(var, "name")).second) << d.file << ": defined twice";
    }
    for (const Value& pv : d.Panels().values()) {
      const Struct& p = pv.struct_value();
      for (const Value& t : p.fields().at("targets").list_value().values()) {
        const Struct& target = t.struct_value();
        for (const char* field : {"expr", "url", "legendFormat"}) {
          for (const std::string& used : testing::VariablesUsed(Str(target, field))) {
            EXPECT_TRUE(defined.count(used) || kBuiltins.count(used))
                << d.file << " / " << Str(p, "title") << ": $" << used << " is not defined";
          }
        }
      }
    }
  }
}

TEST(GrafanaProvisioningTest, DashboardProviderPointsAtTheComposeMount) {
  yaml::Node providers =
      LoadYamlFile(kSource + "/dashboards/provisioning/dashboards/blkbench.yaml")["providers"];
  ASSERT_EQ(providers.size(), 1u);
  EXPECT_EQ(providers[0]["type"].Scalar(), "file");
  const std::string path = providers[0]["options"]["path"].Scalar();
  yaml::Node grafana = LoadYamlFile(kSource + "/deploy/docker-compose.yml")["services"]["grafana"];
  bool mounted = false;
  for (const yaml::Node& v : grafana["volumes"].items()) {
    const std::string& s = v.Scalar();
    if (s.rfind("../dashboards:" + path, 0) == 0) mounted = true;
  }
  EXPECT_TRUE(mounted) << "dashboards/ is not mounted at the provider path " << path;
}

TEST(DockerComposeTest, EveryMountedPathExistsAndServicesMatchTheDatasources) {
  const std::string deploy = kSource + "/deploy";
  yaml::Node compose = LoadYamlFile(deploy + "/docker-compose.yml");
  yaml::Node services = compose["services"];
  for (const char* name : {"controller", "prometheus", "grafana"}) {
    ASSERT_TRUE(services[name]) << "service " << name << " missing";
  }
  std::set<std::string> named_volumes;
  for (const auto& kv : compose["volumes"].entries()) named_volumes.insert(kv.first.Scalar());
  std::map<std::string, std::string> mounts;  // container path -> host path (relative ones)
  for (const auto& svc : services.entries()) {
    for (const yaml::Node& v : svc.second["volumes"].items()) {
      const std::string& spec = v.Scalar();
      const size_t colon = spec.find(':');
      ASSERT_NE(colon, std::string::npos) << spec;
      const std::string src = spec.substr(0, colon);
      std::string dst = spec.substr(colon + 1);
      dst = dst.substr(0, dst.find(':'));
      if (src[0] == '.' || src[0] == '/') {
        EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(deploy) / src))
            << svc.first.Scalar() << ": mounts missing " << src;
        mounts[dst] = src;
      } else {
        EXPECT_TRUE(named_volumes.count(src)) << "undeclared volume " << src;
      }
    }
  }
  const yaml::Node build = services["controller"]["build"];
  EXPECT_TRUE(std::filesystem::exists(deploy + "/" + build["context"].Scalar() + "/" +
                                      build["dockerfile"].Scalar()));
  // Grafana reads the provisioning where the datasource and dashboard files are.
  EXPECT_EQ(mounts["/etc/grafana/provisioning/datasources"],
            "../dashboards/provisioning/datasources");
  EXPECT_EQ(mounts["/etc/grafana/provisioning/dashboards"],
            "../dashboards/provisioning/dashboards");
  // The datasources reach the compose services on the ports they serve.
  yaml::Node ds = LoadYamlFile(kSource + "/dashboards/provisioning/datasources/blkbench.yaml");
  std::set<std::string> urls;
  for (const yaml::Node& d : ds["datasources"].items()) urls.insert(d["url"].Scalar());
  EXPECT_TRUE(urls.count("http://prometheus:9090"));
  EXPECT_TRUE(urls.count("https://controller:9470"));
  bool metrics_on_all = false;
  for (const yaml::Node& a : services["controller"]["command"].items()) {
    if (a.Scalar() == "--metrics_listen=0.0.0.0:9470") metrics_on_all = true;
  }
  EXPECT_TRUE(metrics_on_all) << "the controller's metrics port must be reachable from the network";
  std::set<std::string> args;
  for (const yaml::Node& a : services["controller"]["command"].items()) args.insert(a.Scalar());
  EXPECT_TRUE(args.count("--metrics_tls")) << "exposed metrics must be HTTPS";
  EXPECT_TRUE(args.count("--metrics_token_file=/etc/blkbench/tls/metrics.token"));
  // Prometheus in compose scrapes the controller and discovers agents through it.
  const std::string prom_config = mounts["/etc/prometheus/prometheus.yml"];
  ASSERT_FALSE(prom_config.empty());
  yaml::Node prom = LoadYamlFile(deploy + "/" + prom_config);
  std::set<std::string> jobs;
  for (const yaml::Node& job : prom["scrape_configs"].items()) {
    jobs.insert(job["job_name"].Scalar());
    if (job["http_sd_configs"]) {
      EXPECT_EQ(job["http_sd_configs"][0]["url"].Scalar(), "https://controller:9470/sd/agents");
      EXPECT_EQ(job["scheme"].Scalar(), "https");
      EXPECT_TRUE(job["authorization"]["credentials_file"]) << "the agents' token";
    }
  }
  // The dashboards filter on these job names.
  EXPECT_EQ(jobs, (std::set<std::string>{"blkbench-controller", "blkbench-agents"}));
}

// promtool also checks that the files a config names exist: the lab PKI's ca.pem and
// metrics.token are put in a temporary directory standing in for /etc/blkbench/tls.
TEST(PrometheusConfigTest, PromtoolAcceptsTheShippedConfigs) {
  if (access("/usr/bin/promtool", X_OK) != 0) GTEST_SKIP() << "promtool not installed";
  char dir_template[] = "/tmp/blkbench-promtool-XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template;
  std::ofstream(dir + "/ca.pem") << "placeholder\n";
  std::ofstream(dir + "/metrics.token") << "placeholder\n";
  for (const char* f : {"prometheus.yml", "prometheus-compose.yml"}) {
    std::ifstream in(kSource + "/deploy/prometheus/" + f);
    std::stringstream text;
    text << in.rdbuf();
    const std::string config = dir + "/" + f;
    std::ofstream(config) << absl::StrReplaceAll(text.str(), {{"/etc/blkbench/tls", dir}});
    const std::string cmd = "/usr/bin/promtool check config " + config + " >/dev/null 2>&1";
    EXPECT_EQ(system(cmd.c_str()), 0) << cmd << " (from deploy/prometheus/" << f << ")";
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace blkbench
