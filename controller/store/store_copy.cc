// ReadContents: a whole store through the Store interface (see store_copy.h).
#include "controller/store/store_copy.h"

namespace blkbench {

absl::StatusOr<StoreContents> ReadContents(Store& store) {
  StoreContents out;
  absl::StatusOr<std::vector<v1::Experiment>> list = store.ListExperiments(0);
  if (!list.ok()) return list.status();
  for (auto it = list->rbegin(); it != list->rend(); ++it) {  // newest first → oldest first
    absl::StatusOr<v1::Experiment> e = store.GetExperiment(it->id(), /*with_results=*/true);
    if (!e.ok()) return e.status();
    for (const v1::Run& run : e->runs()) {
      if (run.samples() == 0) continue;
      absl::StatusOr<std::vector<v1::Sample>> samples = store.ListSamples(run.id());
      if (!samples.ok()) return samples.status();
      out.samples[run.id()] = *std::move(samples);
    }
    out.experiments.push_back(*std::move(e));
  }
  absl::StatusOr<std::vector<v1::AgentInfo>> agents = store.ListAgents();
  if (!agents.ok()) return agents.status();
  out.agents = *std::move(agents);
  return out;
}

}  // namespace blkbench
