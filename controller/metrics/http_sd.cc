// Agent discovery for Prometheus; see http_sd.h and http_sd.md.
#include "controller/metrics/http_sd.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "common/http/http_server.h"

namespace blkbench {
namespace {

// "ipv4:10.1.2.3:53422" -> "10.1.2.3"; "ipv6:[fd00::5]:53422" -> "[fd00::5]"; else "".
std::string PeerHost(const std::string& peer) {
  if (peer.rfind("ipv4:", 0) == 0) {
    const std::string rest = peer.substr(5);
    return rest.substr(0, rest.rfind(':'));
  }
  if (peer.rfind("ipv6:", 0) == 0) {
    const std::string rest = peer.substr(5);
    const size_t close = rest.find(']');
    if (close != std::string::npos) return rest.substr(0, close + 1);
    // grpc may percent-encode the brackets: "ipv6:%5B::1%5D:53422".
    const size_t enc = rest.find("%5D");
    if (rest.rfind("%5B", 0) == 0 && enc != std::string::npos) {
      return absl::StrCat("[", rest.substr(3, enc - 3), "]");
    }
  }
  return "";
}

}  // namespace

std::string ResolveMetricsAddress(const std::string& reported, const std::string& peer) {
  if (reported.empty()) return "";
  const size_t colon = reported.rfind(':');
  if (colon == std::string::npos) return reported;
  const std::string host = reported.substr(0, colon);
  const std::string port = reported.substr(colon + 1);
  if (!host.empty() && host != "0.0.0.0" && host != "[::]" && host != "::" && host != "*") {
    return reported;
  }
  std::string peer_host = PeerHost(peer);
  if (peer_host.empty()) peer_host = "127.0.0.1";  // Unix socket or in-process: same host
  if (peer_host == "[::ffff:127.0.0.1]" || peer_host == "[::1]") peer_host = "127.0.0.1";
  return absl::StrCat(peer_host, ":", port);
}

std::string AgentTargetsJson(const std::vector<v1::AgentInfo>& agents,
                             const std::map<std::string, std::string>& metrics_address_by_agent) {
  std::string out = "[";
  bool first = true;
  for (const v1::AgentInfo& a : agents) {
    auto it = metrics_address_by_agent.find(a.agent_id());
    if (it == metrics_address_by_agent.end() || it->second.empty()) continue;
    std::set<std::string> classes;
    for (const v1::DeviceFacts& d : a.devices()) classes.insert(d.device_class());
    std::string class_list = ",";
    for (const std::string& c : classes) absl::StrAppend(&class_list, c, ",");
    absl::StrAppend(&out, first ? "" : ",", "\n  {\"targets\": [", JsonQuote(it->second),
                    "], \"labels\": {\"agent\": ", JsonQuote(a.agent_id()),
                    ", \"__meta_blkbench_connected\": ", a.connected() ? "\"true\"" : "\"false\"",
                    ", \"__meta_blkbench_kernel\": ", JsonQuote(a.host().kernel_release()),
                    ", \"__meta_blkbench_device_classes\": ", JsonQuote(class_list), "}}");
    first = false;
  }
  absl::StrAppend(&out, first ? "]\n" : "\n]\n");
  return out;
}

}  // namespace blkbench
