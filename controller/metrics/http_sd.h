// Prometheus service discovery for agents' exporters: resolving the address an agent
// reports, and the http_sd / file_sd JSON the controller serves at /sd/agents.
#ifndef BLKBENCH_CONTROLLER_METRICS_HTTP_SD_H_
#define BLKBENCH_CONTROLLER_METRICS_HTTP_SD_H_

#include <map>
#include <string>
#include <vector>

#include "blkbench/v1/controller.pb.h"

namespace blkbench {

// The scrape target for an agent that reported `reported` (its metrics_listen, e.g.
// "0.0.0.0:9471", ":9471", "[::]:9471" or "10.1.2.3:9471") on a stream from `peer`
// (grpc ServerContext::peer(): "ipv4:10.1.2.3:53422", "ipv6:[fd00::5]:53422",
// "unix:/run/blkbench.sock"). A wildcard or empty host becomes the peer's address
// (127.0.0.1 for Unix sockets and unknown peers); a concrete host is kept. "" stays "".
std::string ResolveMetricsAddress(const std::string& reported, const std::string& peer);

// One http_sd target group per agent with a metrics address, in agent-id order:
//   [{"targets": ["10.1.2.3:9471"], "labels": {"agent": "...", "__meta_blkbench_connected":
//     "true", "__meta_blkbench_kernel": "...", "__meta_blkbench_device_classes": ",a,b,"}}]
// Agents without an address are left out; no agents gives "[]".
std::string AgentTargetsJson(const std::vector<v1::AgentInfo>& agents,
                             const std::map<std::string, std::string>& metrics_address_by_agent);

}  // namespace blkbench

#endif  // BLKBENCH_CONTROLLER_METRICS_HTTP_SD_H_
