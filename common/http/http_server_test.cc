// HttpServer and HttpGet against each other over real loopback sockets: exact path
// routing, query decoding, status codes and content types, bodies many times the socket
// buffers arriving whole, plain and gzip-encoded, to many clients at once, and scrapes
// served while slow and silent peers hold connections (issue 32).
#include "common/http/http_server.h"

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <functional>
#include <iostream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "common/http/gzip.h"
#include "common/http/http_get.h"
#include "common/testing/lab_pki.h"
#include "common/testing/loop_device.h"
#include "common/testing/slow_peers.h"
#include "common/tls/pki.h"
#include "common/tls/revocation.h"
#include "gtest/gtest.h"

namespace blkbench {
namespace {

std::unique_ptr<HttpServer> StartEcho() {
  std::map<std::string, HttpHandler> handlers;
  handlers["/echo"] = [](const HttpRequest& req) {
    std::string body;
    for (const auto& [k, v] : req.params) absl::StrAppend(&body, k, "=", v, ";");
    return HttpResponse{200, "application/json", body};
  };
  handlers["/fail"] = [](const HttpRequest&) {
    return HttpResponse{400, "text/plain", "bad experiment\n"};
  };
  auto s = HttpServer::Start("127.0.0.1:0", handlers);
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

// A Prometheus-like text body of `bytes` bytes: many distinct lines, so gzip has work
// to do and a dropped or reordered chunk cannot go unnoticed.
std::string MetricsLikeBody(size_t bytes) {
  std::string body;
  body.reserve(bytes + 128);
  for (uint64_t i = 0; body.size() < bytes; ++i) {
    body += "blkbench_run_iops{experiment=\"7\",run=\"" + std::to_string(i) + "\"} " +
            std::to_string((i * 2654435761u) % 1000003) + "\n";
  }
  body.resize(bytes);
  return body;
}

// The bug this guards: civetweb's linger_timeout_ms=0 made close() reset the connection
// with the body still in the send buffer, so clients got ~128 KB and ECONNRESET.
TEST(HttpServerTest, MultiMegabyteBodiesArriveWholeToManyClientsPlainAndGzip) {
  const std::string big = MetricsLikeBody(6 << 20);
  std::map<std::string, HttpHandler> handlers;
  handlers["/big"] = [&big](const HttpRequest&) {
    return HttpResponse{200, kPrometheusContentType, big};
  };
  auto server = HttpServer::Start("127.0.0.1:0", handlers);
  ASSERT_TRUE(server.ok()) << server.status();
  const int port = (*server)->port();
  constexpr int kClients = 4;
  constexpr int kFetchesPerClient = 6;
  std::vector<std::string> failures(kClients);
  std::vector<std::thread> clients;
  clients.reserve(kClients);
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      for (int i = 0; i < kFetchesPerClient; ++i) {
        const bool gzip = (c + i) % 2 == 1;
        auto r = HttpGet(port, "/big", {.timeout = absl::Seconds(60), .accept_gzip = gzip});
        if (!r.ok()) {
          failures[c] += r.status().ToString() + "\n";
        } else if (r->body != big) {
          failures[c] += "body of " + std::to_string(r->body.size()) + " bytes differs\n";
        } else if (r->content_encoding != (gzip ? "gzip" : "")) {
          failures[c] += "encoding '" + r->content_encoding + "'\n";
        } else if (gzip && r->wire_bytes * 4 > big.size()) {
          failures[c] += "gzip sent " + std::to_string(r->wire_bytes) + " bytes\n";
        }
      }
    });
  }
  for (std::thread& t : clients) t.join();
  for (int c = 0; c < kClients; ++c) EXPECT_EQ(failures[c], "") << "client " << c;
}

TEST(HttpServerTest, SmallBodiesAndClientsThatDoNotAskAreNotCompressed) {
  auto server = StartEcho();
  ASSERT_NE(server, nullptr);
  auto r = HttpGet(server->port(), "/echo?a=1", {.accept_gzip = true});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->content_encoding, "");
  EXPECT_EQ(r->body, "a=1;");
}

TEST(GzipTest, RoundTripsAndRejectsTruncatedStreams) {
  const std::string text = MetricsLikeBody(300000);
  const std::string z = GzipCompress(text);
  EXPECT_LT(z.size(), text.size() / 4);
  auto back = GzipDecompress(z);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, text);
  auto two = GzipDecompress(z + GzipCompress("tail"));  // two members concatenated
  ASSERT_TRUE(two.ok()) << two.status();
  EXPECT_EQ(*two, text + "tail");
  EXPECT_EQ(GzipDecompress(z.substr(0, z.size() / 2)).status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(GzipDecompress("not gzip at all").status().code(), absl::StatusCode::kDataLoss);
  auto empty = GzipDecompress(GzipCompress(""));
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(*empty, "");
}

TEST(GzipTest, AcceptEncodingFollowsQValues) {
  EXPECT_TRUE(AcceptsGzip("gzip"));
  EXPECT_TRUE(AcceptsGzip("deflate, GZIP;q=0.5"));
  EXPECT_TRUE(AcceptsGzip("*"));
  EXPECT_TRUE(AcceptsGzip("identity, x-gzip"));
  EXPECT_FALSE(AcceptsGzip(""));
  EXPECT_FALSE(AcceptsGzip("deflate, br"));
  EXPECT_FALSE(AcceptsGzip("gzip;q=0"));
  EXPECT_FALSE(AcceptsGzip("gzip; q=0.0"));
}

// --- Hostile peers (issue 32): connections that send slowly or nothing must not delay
// anyone else's request, and must end at the request deadline.

using ::blkbench::testing::ClosedByServer;
using ::blkbench::testing::ConnectFrom;
using ::blkbench::testing::PartialClientHello;
using ::blkbench::testing::PartialHttpHead;
using ::blkbench::testing::SlowPeers;
using ::blkbench::testing::TimeUntilClosed;

// Short enough that peers are cut (and reconnect) while a test scrapes; long against a
// loopback GET (milliseconds), so "within half the deadline" separates a server whose
// workers wait on slow peers (a scrape then waits a whole deadline) from one whose don't.
constexpr absl::Duration kShortDeadline = absl::Seconds(2);

HttpLimits ShortDeadline() {
  HttpLimits limits;
  limits.request_deadline = kShortDeadline;
  return limits;
}

std::map<std::string, HttpHandler> UpHandler() {
  std::map<std::string, HttpHandler> handlers;
  handlers["/metrics"] = [](const HttpRequest&) {
    return HttpResponse{200, kPrometheusContentType, "up 1\n"};
  };
  return handlers;
}

// Polls `done` until it holds or `timeout` passes.
bool Eventually(const std::function<bool()>& done, absl::Duration timeout = absl::Seconds(20)) {
  const absl::Time until = absl::Now() + timeout;
  while (!done()) {
    if (absl::Now() > until) return false;
    absl::SleepFor(absl::Milliseconds(5));
  }
  return true;
}

// Source addresses for slow peers: `on_scraper` from 127.0.0.1, where the scraper connects
// from (fewer than the per-peer cap, so it keeps a slot), and `per_address` from each of
// 127.0.0.<first>, … <first + addresses - 1>.
std::vector<std::string> Sources(int on_scraper, int first, int addresses, int per_address) {
  std::vector<std::string> out(on_scraper, "127.0.0.1");
  for (int a = first; a < first + addresses; ++a) {
    for (int i = 0; i < per_address; ++i) out.push_back("127.0.0." + std::to_string(a));
  }
  return out;
}

// GETs back to back for `duration` with `get`; every one must succeed within `bound`.
void ScrapeFor(absl::Duration duration, absl::Duration bound,
               const std::function<absl::StatusOr<HttpResult>()>& get) {
  absl::Duration slowest;
  int scrapes = 0;
  for (const absl::Time end = absl::Now() + duration; absl::Now() < end; ++scrapes) {
    const absl::Time start = absl::Now();
    absl::StatusOr<HttpResult> r = get();
    const absl::Duration took = absl::Now() - start;
    slowest = std::max(slowest, took);
    EXPECT_TRUE(r.ok()) << "scrape " << scrapes << ": " << r.status();
    if (r.ok()) {
      EXPECT_EQ(r->status, 200);
    }
    EXPECT_LT(took, bound) << "scrape " << scrapes;
  }
  std::cout << scrapes << " scrapes, the slowest took " << slowest << "\n";
}

// 36 peers (4 from the scraper's own address, 8 from each of four others), half trickling
// `bytes`, half silent, against a server with `port`; scrapes run for 2.5 deadlines, so
// every peer is cut at least once and reconnects meanwhile.
void ScrapeBesideSlowPeers(const HttpServer& server, const std::string& bytes,
                           const std::function<absl::StatusOr<HttpResult>()>& get) {
  constexpr int kOnScraper = 2;  // per group: 4 slow peers share the scraper's address
  constexpr int kPeers = 2 * (kOnScraper + 2 * 8);
  SlowPeers trickling(server.port(), Sources(kOnScraper, 2, 2, 8), bytes);
  SlowPeers silent(server.port(), Sources(kOnScraper, 4, 2, 8), "");
  ASSERT_TRUE(Eventually([&] { return server.stats().open >= kPeers; })) << server.stats().open;
  ScrapeFor(kShortDeadline * 5 / 2, kShortDeadline / 2, get);
  EXPECT_GT(trickling.closed_by_server(), 0);
  EXPECT_GT(silent.closed_by_server(), 0);
  EXPECT_GE(server.stats().deadline_exceeded, static_cast<uint64_t>(kPeers));
  // The scraper shares 127.0.0.1 with four peers under the cap of eight, scraping back to
  // back: its answered connections are released once the server has drained them, which
  // a loaded host may do a few connections late; four free slots cover that, and a server
  // that never released them would still be refused within the first few scrapes.
  EXPECT_EQ(server.stats().refused_peer_cap, 0u);
}

TEST(HttpSlowPeersTest, ScrapesStayFastWhileSlowPeersHoldConnections) {
  // One worker, as an agent has.
  auto server = HttpServer::Start("127.0.0.1:0", UpHandler(), 1, {}, ShortDeadline());
  ASSERT_TRUE(server.ok()) << server.status();
  const int port = (*server)->port();
  ScrapeBesideSlowPeers(**server, PartialHttpHead(),
                        [port] { return HttpGet(port, "/metrics", kShortDeadline); });
}

TEST(HttpSlowPeersTest, PeerStillTricklingAtTheDeadlineIsCut) {
  constexpr absl::Duration kDeadline = absl::Seconds(1);
  HttpLimits limits;
  limits.request_deadline = kDeadline;
  auto server = HttpServer::Start("127.0.0.1:0", UpHandler(), 1, {}, limits);
  ASSERT_TRUE(server.ok()) << server.status();
  const absl::Duration took = TimeUntilClosed((*server)->port(), "127.0.0.2", PartialHttpHead(),
                                              absl::Milliseconds(100), kDeadline * 10);
  std::cout << "cut after " << took << "\n";
  EXPECT_GE(took, kDeadline * 0.9);  // a byte every 100 ms is not "idle"
  EXPECT_LT(took, kDeadline + absl::Seconds(2));
  EXPECT_EQ((*server)->stats().deadline_exceeded, 1u);
}

TEST(HttpSlowPeersTest, ConnectionsBeyondThePeerAndTotalCapsAreClosedAtOnce) {
  HttpLimits limits;
  limits.request_deadline = absl::Seconds(60);  // nothing is cut by time here
  limits.max_connections_per_peer = 3;
  limits.max_connections = 5;
  auto started = HttpServer::Start("127.0.0.1:0", UpHandler(), 1, {}, limits);
  ASSERT_TRUE(started.ok()) << started.status();
  HttpServer& server = **started;
  std::vector<int> held;
  held.reserve(5);
  for (int i = 0; i < 3; ++i) held.push_back(ConnectFrom("127.0.0.2", server.port()));
  ASSERT_TRUE(Eventually([&] { return server.stats().open == 3; }));

  const int over_peer = ConnectFrom("127.0.0.2", server.port());
  absl::Time start = absl::Now();
  EXPECT_TRUE(ClosedByServer(over_peer, absl::Seconds(10)));
  EXPECT_LT(absl::Now() - start, absl::Seconds(1));
  EXPECT_EQ(server.stats().refused_peer_cap, 1u);
  for (int fd : held) EXPECT_FALSE(ClosedByServer(fd, absl::ZeroDuration()));
  auto other = HttpGet(server.port(), "/metrics");  // another address still gets in
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_EQ(other->status, 200);
  // That answered connection holds its slot until the server has drained it.
  ASSERT_TRUE(Eventually([&] { return server.stats().open == 3; })) << server.stats().open;

  for (int i = 0; i < 2; ++i) held.push_back(ConnectFrom("127.0.0.3", server.port()));
  ASSERT_TRUE(Eventually([&] { return server.stats().open == 5; }));
  const int over_total = ConnectFrom("127.0.0.4", server.port());
  start = absl::Now();
  EXPECT_TRUE(ClosedByServer(over_total, absl::Seconds(10)));
  EXPECT_LT(absl::Now() - start, absl::Seconds(1));
  EXPECT_EQ(server.stats().refused_total_cap, 1u);
  EXPECT_FALSE(HttpGet(server.port(), "/metrics").ok()) << "the total cap holds for everyone";

  close(held[0]);  // a slot frees: the next connection is served
  ASSERT_TRUE(Eventually([&] { return server.stats().open == 4; }));
  auto after = HttpGet(server.port(), "/metrics");
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ(after->status, 200);
  for (int fd : {over_peer, over_total}) close(fd);
  for (size_t i = 1; i < held.size(); ++i) close(held[i]);
}

TEST(HttpServerTest, JsonQuoteEscapesControlCharacters) {
  EXPECT_EQ(JsonQuote("a\"b\\c\n\x01"), "\"a\\\"b\\\\c\\n\\u0001\"");
}

// HTTPS with a lab PKI made here (common/tls/pki.h): the server's certificate verified
// against the lab CA, client certificates required (none, another CA's and a revoked one
// refused; revocation read again when the list changes), and a bearer token.
class HttpsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    pki_ = dir_.File("pki");
    other_ = dir_.File("other");
    using tls::Kind;
    const tls::CertRequest reader = testing::Cert(Kind::kCli, "prometheus", tls::Role::kRead);
    ASSERT_TRUE(
        testing::MakeLabPki(pki_, {testing::Cert(Kind::kController, "controller"), reader}).ok());
    ASSERT_TRUE(testing::MakeLabPki(other_, {reader}).ok());
    std::ofstream(dir_.File("token")) << "s3cret-token\n";
    chmod(dir_.File("token").c_str(), 0600);
  }

  std::unique_ptr<HttpServer> Start(bool client_certs, const std::string& token_file,
                                    const HttpLimits& limits = {}) {
    auto sec = HttpSecurityFromFlags({.listen = "127.0.0.1:0",
                                      .tls_dir = pki_,
                                      .stem = "controller",
                                      .tls = true,
                                      .client_certs = client_certs,
                                      .token_file = token_file,
                                      .insecure = false,
                                      .revoked = nullptr});
    EXPECT_TRUE(sec.ok()) << sec.status();
    if (!sec.ok()) return nullptr;
    auto s = HttpServer::Start("127.0.0.1:0", UpHandler(), 2, *sec, limits);
    EXPECT_TRUE(s.ok()) << s.status();
    return s.ok() ? std::move(*s) : nullptr;
  }

  HttpClientAuth Client(const std::string& dir, bool with_cert) const {
    HttpClientAuth auth;
    auth.ca_file = pki_ + "/ca.pem";
    if (with_cert) {
      auth.cert_file = dir + "/cli-prometheus.pem";
      auth.key_file = dir + "/cli-prometheus.key";
    }
    return auth;
  }

  ::blkbench::testing::TempDir dir_{"https_test"};
  std::string pki_;
  std::string other_;
};

TEST_F(HttpsTest, ServesOnlyTlsAndTheClientVerifiesTheServer) {
  auto server = Start(false, "");
  ASSERT_NE(server, nullptr);
  auto r = HttpGet(server->port(), "/metrics", HttpGetOptions(), Client(pki_, false));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->body, "up 1\n");
  // Plain HTTP to the TLS port gets no HTTP answer.
  EXPECT_FALSE(HttpGet(server->port(), "/metrics").ok());
  // A client trusting another CA refuses the server.
  HttpClientAuth wrong_ca;
  wrong_ca.ca_file = other_ + "/ca.pem";
  auto refused = HttpGet(server->port(), "/metrics", HttpGetOptions(), wrong_ca);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kUnauthenticated) << refused.status();
}

TEST_F(HttpsTest, ClientCertificatesFromTheLabCaOnlyAndNotRevoked) {
  auto server = Start(true, "");
  ASSERT_NE(server, nullptr);
  EXPECT_FALSE(HttpGet(server->port(), "/metrics", HttpGetOptions(), Client(pki_, false)).ok())
      << "no client certificate";
  EXPECT_FALSE(HttpGet(server->port(), "/metrics", HttpGetOptions(), Client(other_, true)).ok())
      << "another CA's client certificate";
  auto ok = HttpGet(server->port(), "/metrics", HttpGetOptions(), Client(pki_, true));
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->status, 200);

  // Revoked while the server runs: the next request is refused, naming the serial.
  auto pem = tls::ReadPemFile(pki_ + "/cli-prometheus.pem", "certificate");
  ASSERT_TRUE(pem.ok());
  auto serial = tls::CertSerialHex(*pem);
  ASSERT_TRUE(serial.ok());
  ASSERT_TRUE(tls::AppendRevoked(pki_ + "/revoked.txt", *serial, "test").ok());
  auto revoked = HttpGet(server->port(), "/metrics", HttpGetOptions(), Client(pki_, true));
  ASSERT_TRUE(revoked.ok()) << revoked.status();
  EXPECT_EQ(revoked->status, 403);
  EXPECT_NE(revoked->body.find(*serial), std::string::npos) << revoked->body;
}

TEST_F(HttpsTest, BearerTokenIsRequiredAndCompared) {
  auto server = Start(false, dir_.File("token"));
  ASSERT_NE(server, nullptr);
  HttpClientAuth auth = Client(pki_, false);
  auto missing = HttpGet(server->port(), "/metrics", HttpGetOptions(), auth);
  ASSERT_TRUE(missing.ok()) << missing.status();
  EXPECT_EQ(missing->status, 401);
  auth.bearer_token = "s3cret-tokeN";
  auto wrong = HttpGet(server->port(), "/metrics", HttpGetOptions(), auth);
  ASSERT_TRUE(wrong.ok()) << wrong.status();
  EXPECT_EQ(wrong->status, 401);
  auth.bearer_token = "s3cret-token";
  auto right = HttpGet(server->port(), "/metrics", HttpGetOptions(), auth);
  ASSERT_TRUE(right.ok()) << right.status();
  EXPECT_EQ(right->status, 200);
}

// The issue-32 attack as reported: peers trickling a ClientHello need no certificate.
TEST_F(HttpsTest, ScrapesWithAClientCertificateStayFastWhileSlowPeersHoldHandshakes) {
  auto server = Start(true, "", ShortDeadline());
  ASSERT_NE(server, nullptr);
  const int port = server->port();
  const HttpClientAuth auth = Client(pki_, true);
  ScrapeBesideSlowPeers(*server, PartialClientHello(), [&] {
    return HttpGet(port, "/metrics", HttpGetOptions{.timeout = kShortDeadline}, auth);
  });
}

TEST_F(HttpsTest, HandshakeStillTricklingAtTheDeadlineIsCut) {
  constexpr absl::Duration kDeadline = absl::Seconds(1);
  HttpLimits limits;
  limits.request_deadline = kDeadline;
  auto server = Start(true, "", limits);
  ASSERT_NE(server, nullptr);
  const absl::Duration took = TimeUntilClosed(server->port(), "127.0.0.2", PartialClientHello(),
                                              absl::Milliseconds(100), kDeadline * 10);
  std::cout << "cut after " << took << "\n";
  EXPECT_GE(took, kDeadline * 0.9);
  EXPECT_LT(took, kDeadline + absl::Seconds(2));
  EXPECT_EQ(server->stats().deadline_exceeded, 1u);
}

TEST_F(HttpsTest, FlagsRefuseExposedPlainEndpointsAndLeakyTokenFiles) {
  HttpSecurityFlags flags;
  flags.listen = "0.0.0.0:9470";
  auto plain = HttpSecurityFromFlags(flags);
  EXPECT_EQ(plain.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(plain.status().message().find("--insecure"), absl::string_view::npos);
  flags.tls_dir = pki_;
  flags.stem = "controller";
  flags.tls = true;
  EXPECT_FALSE(HttpSecurityFromFlags(flags).ok()) << "HTTPS but anyone may read";
  flags.token_file = dir_.File("token");
  EXPECT_TRUE(HttpSecurityFromFlags(flags).ok());
  chmod(dir_.File("token").c_str(), 0644);
  auto leaky = HttpSecurityFromFlags(flags);
  EXPECT_EQ(leaky.status().code(), absl::StatusCode::kFailedPrecondition) << leaky.status();
  HttpSecurityFlags insecure;
  insecure.listen = "0.0.0.0:9470";
  insecure.insecure = true;
  EXPECT_TRUE(HttpSecurityFromFlags(insecure).ok());
  HttpSecurityFlags loopback;
  loopback.listen = "127.0.0.1:9470";
  EXPECT_TRUE(HttpSecurityFromFlags(loopback).ok());
}

}  // namespace
}  // namespace blkbench
