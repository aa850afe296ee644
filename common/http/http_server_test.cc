// HttpServer and HttpGet against each other over real loopback sockets: exact path
// routing, query decoding, status codes and content types.
#include "common/http/http_server.h"

#include "common/http/http_get.h"
#include "gtest/gtest.h"

namespace blkbench {
namespace {

std::unique_ptr<HttpServer> StartEcho() {
  std::map<std::string, HttpHandler> handlers;
  handlers["/echo"] = [](const HttpRequest& req) {
    std::string body;
    for (const auto& [k, v] : req.params) body += k + "=" + v + ";";
    return HttpResponse{200, "application/json", body};
  };
  handlers["/fail"] = [](const HttpRequest&) {
    return HttpResponse{400, "text/plain", "bad experiment\n"};
  };
  auto s = HttpServer::Start("127.0.0.1:0", std::move(handlers));
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? std::move(*s) : nullptr;
}

TEST(HttpServerTest, ServesHandlersWithDecodedQueryParameters) {
  auto server = StartEcho();
  ASSERT_NE(server, nullptr);
  ASSERT_GT(server->port(), 0);
  EXPECT_EQ(server->address(), "127.0.0.1:" + std::to_string(server->port()));
  auto r = HttpGet(server->port(), "/echo?b=x%20y&a=" + UrlEncode("{k=\"v\"}") + "&c=1+2");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->content_type, "application/json");
  EXPECT_EQ(r->body, "a={k=\"v\"};b=x y;c=1 2;");
}

TEST(HttpServerTest, UnknownPathsAndPrefixesAre404AndErrorsKeepTheirStatus) {
  auto server = StartEcho();
  ASSERT_NE(server, nullptr);
  for (const char* path : {"/", "/nothing", "/echo/more", "/echox"}) {
    auto r = HttpGet(server->port(), path);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->status, 404) << path;
  }
  auto r = HttpGet(server->port(), "/fail");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, 400);
  EXPECT_EQ(r->body, "bad experiment\n");
}

TEST(HttpServerTest, AddressInUseIsUnavailable) {
  auto first = StartEcho();
  ASSERT_NE(first, nullptr);
  auto second = HttpServer::Start("127.0.0.1:" + std::to_string(first->port()), {});
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable) << second.status();
}

TEST(HttpServerTest, JsonQuoteEscapesControlCharacters) {
  EXPECT_EQ(JsonQuote("a\"b\\c\n\x01"), "\"a\\\"b\\\\c\\n\\u0001\"");
}

}  // namespace
}  // namespace blkbench
