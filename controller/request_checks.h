// Clear statuses for what gRPC itself refuses: a request message that does not parse
// (gRPC C++ answers a bare INTERNAL) and a call the sync server had no thread for (a
// RESOURCE_EXHAUSTED saying only "Server Threadpool Exhausted"), rewritten by a server interceptor
// in one place.
#ifndef BLKBENCH_CONTROLLER_REQUEST_CHECKS_H_
#define BLKBENCH_CONTROLLER_REQUEST_CHECKS_H_

#include <cstdint>
#include <memory>
#include <string>

#include "grpcpp/support/server_interceptor.h"
#include "grpcpp/support/status.h"

namespace blkbench {

// INVALID_ARGUMENT naming `full_method` ("/blkbench.v1.ControllerService/GetExperiment")
// and the message type it takes (from the generated descriptor pool); `index` > 0 says
// which message of a stream it was.
grpc::Status MalformedRequest(const std::string& full_method, uint64_t index = 0);

// For ServerBuilder::experimental().SetInterceptorCreators, first in the list so later
// interceptors (metrics) see the rewritten status. A unary or server-streaming call
// whose request did not deserialize (POST_RECV_MESSAGE without a message) and that ends
// INTERNAL ends with MalformedRequest instead; a call the sync server refused for want
// of a thread (at most `max_threads`) gets a message naming the flags that size it. Bidirectional
// streams see the end of the stream as "no message" too, so they check their messages
// themselves (services.cc ReadAgentMessage).
std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
NewRequestChecksInterceptorFactory(int max_threads);

}  // namespace blkbench

#endif  // BLKBENCH_CONTROLLER_REQUEST_CHECKS_H_
