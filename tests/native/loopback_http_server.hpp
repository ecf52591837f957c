#pragma once
// An in-process HTTP/1.1 server for the native HTTP tests (cpp-httplib), bound to
// 127.0.0.1 on an ephemeral port. The test registers handlers, then start()s it; the
// handlers run on the server's own threads.
//
// Two scripting aids make slow and broken servers deterministic, without sleeps:
//  - ChunkFeed: a chunked response body the test writes piece by piece while the client
//    reads it (push / end / cut). Waiting at the client for piece 1 before pushing piece 2
//    proves the client streams instead of buffering.
//  - park(): a handler that never answers (until the server is destroyed).
// Every request that reaches a handler is recorded (method, path, headers, body).
//
// Destruction releases every parked handler and every open feed (a feed left open is cut),
// then stops the server and joins its threads.

#include <httplib.h>

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace mcprt::native::test {

// Made by LoopbackHttpServer::make_feed(), so that the server can end it on destruction.
class ChunkFeed : public std::enable_shared_from_this<ChunkFeed> {
 public:
  // Queues `bytes` as the next piece of the body.
  void push(std::string bytes);
  // Ends the body properly (the terminating zero-length chunk).
  void end();
  // Drops the connection where the body is now: the client sees a body cut short.
  void cut();

  // True once the server started sending this feed (its head went out).
  bool started() const;
  // True once the server stopped serving this feed: the body ended, was cut, or writing
  // to the client failed (the client went away).
  bool finished() const;

  // Serves this feed as `res`'s body with Transfer-Encoding: chunked.
  void attach(httplib::Response& res, const std::string& content_type);

 private:
  friend class LoopbackHttpServer;
  ChunkFeed() = default;
  enum class Kind { bytes, end, cut };
  struct Item {
    Kind kind;
    std::string bytes;
  };
  void add(Item item);
  void shut_down();
  bool next(httplib::DataSink& sink);

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Item> items_;
  bool started_ = false;
  bool finished_ = false;
  bool shut_down_ = false;
};

struct RecordedRequest {
  std::string method;
  std::string path;    // without the query
  std::string target;  // path and query, as the server parsed them
  httplib::Headers headers;
  std::string body;

  std::string header(const std::string& name) const;
};

class LoopbackHttpServer {
 public:
  using Handler = httplib::Server::Handler;

  // A certificate chain and key (PEM files) for an https server.
  struct Tls {
    std::string cert_file;
    std::string key_file;
  };

  // Binds 127.0.0.1:<ephemeral>; port() is valid at once. Routes go in before start().
  LoopbackHttpServer();
  explicit LoopbackHttpServer(const Tls& tls);
  ~LoopbackHttpServer();
  LoopbackHttpServer(const LoopbackHttpServer&) = delete;
  LoopbackHttpServer& operator=(const LoopbackHttpServer&) = delete;

  void get(const std::string& pattern, Handler handler);
  void post(const std::string& pattern, Handler handler);
  void del(const std::string& pattern, Handler handler);

  // Starts accepting and returns once the server answers. Call once, after the routes.
  void start();

  int port() const { return port_; }
  // "http://127.0.0.1:<port><path>" (https:// for a TLS server).
  std::string url(const std::string& path) const;

  // A feed the server cuts when it is destroyed (so no handler outlives the test).
  std::shared_ptr<ChunkFeed> make_feed();

  // Call inside a handler: blocks it until the server is destroyed. The client then never
  // gets an answer; destruction answers it 503 (nobody is reading by then).
  void park(httplib::Response& res);
  // Handlers parked right now.
  std::size_t parked() const;

  std::vector<RecordedRequest> requests() const;
  std::size_t count(const std::string& method, const std::string& path) const;

 private:
  void init();
  Handler recorded(Handler handler);

  std::unique_ptr<httplib::Server> server_;
  bool tls_ = false;
  int port_ = 0;
  std::thread thread_;

  mutable std::mutex mutex_;
  std::condition_variable released_;
  bool shutting_down_ = false;
  std::size_t parked_ = 0;
  std::vector<RecordedRequest> requests_;
  std::vector<std::shared_ptr<ChunkFeed>> feeds_;
};

}  // namespace mcprt::native::test
