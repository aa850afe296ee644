// Pieces shared by the CLI's commands: parsed arguments and the controller client.
#ifndef BLKBENCH_CLI_CLI_COMMON_H_
#define BLKBENCH_CLI_CLI_COMMON_H_

#include <chrono>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "blkbench/v1/controller.grpc.pb.h"
#include "cli/connect_errors.h"
#include "controller/client_errors.h"
#include "grpcpp/grpcpp.h"

namespace blkbench {
namespace workloads {
struct Matrix;
}  // namespace workloads

struct Args {
  std::string controller;
  std::vector<std::string> positional;
  std::map<std::string, std::string> flags;  // --name or --name=value / --name value
  // Every value of each flag in command-line order (flags keeps the last), for flags a
  // command takes more than once (`run --device A --device B`).
  std::map<std::string, std::vector<std::string>> values;
  // Loaded by a command's check for its run, so a matrix file is read once and parsed
  // once: its text as read (what `submit` sends) and its parse (what `validate` prints
  // and `sim` runs). Empty for commands that take no matrix.
  std::string matrix_text;
  std::shared_ptr<const workloads::Matrix> matrix;

  // Whether --`name` was given.
  bool Has(const std::string& name) const { return flags.count(name) > 0; }
  // The last value of --`name`, or `fallback` when it was not given.
  std::string Get(const std::string& name, const std::string& fallback = "") const {
    auto it = flags.find(name);
    return it == flags.end() ? fallback : it->second;
  }
  // Every value of --`name` in command-line order; empty when it was not given.
  std::vector<std::string> All(const std::string& name) const {
    auto it = values.find(name);
    return it == values.end() ? std::vector<std::string>{} : it->second;
  }
};

class Client {
 public:
  Client(std::shared_ptr<grpc::Channel> channel, std::string address, std::ostream& err)
      : channel_(std::move(channel)),
        stub_(v1::ControllerService::NewStub(channel_)),
        address_(std::move(address)),
        err_(err) {}

  // Prints a clear message and returns the CLI exit code for a failed call: 4 when the
  // controller answered that its store is unavailable, 3 when no answer came (nothing
  // listening, a socket this user may not use, a deadline), 1 otherwise.
  int Fail(const grpc::Status& s) {
    if (IsStoreUnavailable(s)) {
      err_ << "blkbench: the controller at " << address_
           << " is running but its store is unavailable: "
           << s.error_message().substr(std::char_traits<char>::length(kStoreUnavailablePrefix))
           << "\n  (check the database blkbench-controller --db names; the controller keeps "
              "retrying, try again once it is back)\n";
      return kExitStoreUnavailable;
    }
    if (s.error_code() == grpc::StatusCode::UNAVAILABLE ||
        s.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
      err_ << "blkbench: " << UnreachableMessage(address_, s.error_message()) << "\n";
      return 3;
    }
    err_ << "blkbench: " << s.error_message() << "\n";
    return 1;
  }
  void Deadline(grpc::ClientContext* ctx, int seconds = 30) {
    ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(seconds));
  }
  v1::ControllerService::Stub& stub() { return *stub_; }

 private:
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::ControllerService::Stub> stub_;
  std::string address_;
  std::ostream& err_;
};

}  // namespace blkbench

#endif  // BLKBENCH_CLI_CLI_COMMON_H_
