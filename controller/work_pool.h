// WorkPool: a fixed set of threads running posted tasks in FIFO order. The agent
// service's reactors hand each message to it, so Controller calls (which take the
// controller's mutex and may wait for the store) never run on gRPC's callback threads.
#ifndef BLKBENCH_CONTROLLER_WORK_POOL_H_
#define BLKBENCH_CONTROLLER_WORK_POOL_H_

#include <pthread.h>

#include <deque>
#include <functional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace blkbench {

// Thread-safe. Tasks start in Post order; with more than one thread they may overlap.
// The destructor runs every task already posted, then joins.
class WorkPool {
 public:
  // `threads` >= 1, named `name` (at most 15 characters show in /proc/*/comm).
  WorkPool(int threads, const std::string& name) {
    threads_.reserve(threads);
    for (int i = 0; i < threads; ++i) {
      threads_.emplace_back([this] { Run(); });
      pthread_setname_np(threads_.back().native_handle(), name.substr(0, 15).c_str());
    }
  }
  ~WorkPool() {
    {
      absl::MutexLock lock(&mu_);
      stopping_ = true;
    }
    for (std::thread& t : threads_) t.join();
  }
  WorkPool(const WorkPool&) = delete;
  WorkPool& operator=(const WorkPool&) = delete;

  void Post(std::function<void()> task) {
    absl::MutexLock lock(&mu_);
    queue_.push_back(std::move(task));
  }
  int size() const { return static_cast<int>(threads_.size()); }

 private:
  void Run() {
    while (true) {
      std::function<void()> task;
      {
        absl::MutexLock lock(&mu_);
        auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
          return stopping_ || !queue_.empty();
        };
        mu_.Await(absl::Condition(&ready));
        if (queue_.empty()) return;  // stopping, and nothing left
        task = std::move(queue_.front());
        queue_.pop_front();
      }
      task();
    }
  }

  absl::Mutex mu_;
  std::deque<std::function<void()>> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;  // last: started after everything they use
};

}  // namespace blkbench

#endif  // BLKBENCH_CONTROLLER_WORK_POOL_H_
