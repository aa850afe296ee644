// RunQueue: queued runs by placement key, and the placement pass over them.
#include "controller/run_queue.h"

#include <queue>
#include <string_view>
#include <utility>

#include "common/placement.h"

namespace blkbench {

PlacementKey PlacementKey::Of(const v1::CellSpec& cell) {
  return PlacementKey{cell.target().device_class(), cell.target().kernel()};
}

void RunQueue::Add(const PlacementKey& key, const QueuedRun& run) {
  if (queues_[key].runs.insert(run).second) ++size_;
}

bool RunQueue::Remove(const PlacementKey& key, uint64_t run_id) {
  auto it = queues_.find(key);
  if (it == queues_.end()) return false;
  if (it->second.runs.erase(QueuedRun{run_id, 0, 0}) == 0) return false;
  --size_;
  if (it->second.runs.empty()) queues_.erase(it);
  return true;
}

bool RunQueue::Matches(const PlacementKey& key, Queue& queue, const std::string& kernel_release) {
  auto [it, inserted] = queue.kernel_matches.try_emplace(kernel_release, false);
  if (inserted) it->second = KernelMatches(key.kernel, kernel_release);
  return it->second;
}

std::vector<RunQueue::Pick> RunQueue::Choose(
    const std::vector<FreeDevice>& devices, const std::function<Verdict(const QueuedRun&)>& check) {
  std::vector<Pick> picks;
  if (devices.empty() || queues_.empty()) return picks;
  std::map<std::string_view, std::vector<size_t>> by_class;  // device indices, in order
  for (size_t i = 0; i < devices.size(); ++i) by_class[*devices[i].device_class].push_back(i);

  // A key that can take some free device: its runs from `next` on, and the devices it
  // matches in placement order (those before `cursor` are known to be picked).
  struct Candidate {
    const PlacementKey* key;
    const absl::btree_set<QueuedRun, ById>* runs;
    absl::btree_set<QueuedRun, ById>::const_iterator next;
    std::vector<size_t> devices;
    size_t cursor = 0;
  };
  std::vector<Candidate> candidates;
  for (auto& [key, queue] : queues_) {
    auto cls = by_class.find(key.device_class);
    if (cls == by_class.end()) continue;
    std::vector<size_t> matching;
    for (size_t i : cls->second) {
      if (Matches(key, queue, *devices[i].kernel_release)) matching.push_back(i);
    }
    if (matching.empty()) continue;
    candidates.push_back({&key, &queue.runs, queue.runs.begin(), std::move(matching), 0});
  }
  // A k-way merge of the candidates' runs by id: the lowest queued id that some free
  // device can take comes first, as when every queued run was read in id order.
  auto later = [](const Candidate* a, const Candidate* b) {
    return a->next->run_id > b->next->run_id;
  };
  std::priority_queue<Candidate*, std::vector<Candidate*>, decltype(later)> heads(later);
  for (Candidate& c : candidates) heads.push(&c);
  std::vector<bool> picked(devices.size(), false);
  std::vector<std::pair<PlacementKey, uint64_t>> gone;
  while (!heads.empty() && picks.size() < devices.size()) {
    Candidate* c = heads.top();
    heads.pop();
    while (c->cursor < c->devices.size() && picked[c->devices[c->cursor]]) ++c->cursor;
    // Devices are only taken in a pass: none of this key's later runs can be placed.
    if (c->cursor == c->devices.size()) continue;
    const QueuedRun& run = *c->next;
    const Verdict verdict = check(run);
    if (verdict == Verdict::kStop) break;
    if (verdict == Verdict::kTake) {
      picked[c->devices[c->cursor]] = true;
      picks.push_back({c->devices[c->cursor], run, *c->key});
      ++c->cursor;
    } else {
      gone.emplace_back(*c->key, run.run_id);
    }
    if (++c->next != c->runs->end()) heads.push(c);
  }
  for (const auto& [key, run_id] : gone) Remove(key, run_id);
  return picks;
}

}  // namespace blkbench
