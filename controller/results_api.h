// The results API: stored experiments and run results as JSON over HTTP, for Grafana's
// Infinity datasource (historical panels) and scripts. Served on the metrics port:
//   GET /api/v1/experiments[?limit=N]
//   GET /api/v1/results?experiment=ID|latest[&kernel=K][&cell=C]
// See docs/metrics.md for the fields. The handlers read through the Controller (its
// GetExperiment/ListExperiments), never the store behind it, like the gRPC services.
#ifndef BLKBENCH_CONTROLLER_RESULTS_API_H_
#define BLKBENCH_CONTROLLER_RESULTS_API_H_

#include "common/http/http_server.h"
#include "controller/controller.h"

namespace blkbench {

// Newest first: [{"id", "name", "state", "created_unix_ms", "finished_unix_ms",
// "cells", "runs"}]. 400 for a bad limit, 503 when the store fails.
HttpResponse ExperimentsJson(Controller& controller, const HttpRequest& req);

// One row per run of the experiment that has a stored result (DONE), in run-id order,
// optionally only those whose kernel label or cell label equals the parameter. 400 for
// a missing or malformed experiment, 404 for an unknown one, 503 when the store fails.
HttpResponse ResultsJson(Controller& controller, const HttpRequest& req);

}  // namespace blkbench

#endif  // BLKBENCH_CONTROLLER_RESULTS_API_H_
