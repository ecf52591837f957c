#include "loopback_http_server.hpp"

#include <stdexcept>

namespace mcprt::native::test {

// Enough server threads for every concurrent stream a test opens (a streaming or parked
// handler holds its thread); httplib's default is 8.
constexpr std::size_t kServerThreads = 32;

// ---- ChunkFeed -------------------------------------------------------------------------

void ChunkFeed::push(std::string bytes) { add(Item{Kind::bytes, std::move(bytes)}); }
void ChunkFeed::end() { add(Item{Kind::end, {}}); }
void ChunkFeed::cut() { add(Item{Kind::cut, {}}); }

void ChunkFeed::add(Item item) {
  {
    std::lock_guard lock(mutex_);
    items_.push_back(std::move(item));
  }
  changed_.notify_all();
}

void ChunkFeed::shut_down() {
  {
    std::lock_guard lock(mutex_);
    shut_down_ = true;
  }
  changed_.notify_all();
}

bool ChunkFeed::started() const {
  std::lock_guard lock(mutex_);
  return started_;
}

bool ChunkFeed::finished() const {
  std::lock_guard lock(mutex_);
  return finished_;
}

bool ChunkFeed::next(httplib::DataSink& sink) {
  std::unique_lock lock(mutex_);
  started_ = true;
  changed_.wait(lock, [&] { return !items_.empty() || shut_down_; });
  if (items_.empty()) {  // the server is going away: cut
    finished_ = true;
    return false;
  }
  Item item = std::move(items_.front());
  items_.pop_front();
  switch (item.kind) {
    case Kind::bytes: {
      lock.unlock();
      const bool written = sink.write(item.bytes.data(), item.bytes.size());
      if (!written) {
        lock.lock();
        finished_ = true;
      }
      return written;
    }
    case Kind::end:
      finished_ = true;
      lock.unlock();
      sink.done();
      return true;
    case Kind::cut:
      finished_ = true;
      return false;
  }
  return false;
}

void ChunkFeed::attach(httplib::Response& res, const std::string& content_type) {
  // The provider may run after the test dropped its handle on the feed.
  res.set_chunked_content_provider(
      content_type, [self = shared_from_this()](std::size_t, httplib::DataSink& sink) {
        return self->next(sink);
      });
}

// ---- RecordedRequest -------------------------------------------------------------------

std::string RecordedRequest::header(const std::string& name) const {
  auto it = headers.find(name);
  return it == headers.end() ? std::string() : it->second;
}

// ---- LoopbackHttpServer ----------------------------------------------------------------

LoopbackHttpServer::LoopbackHttpServer() : server_(std::make_unique<httplib::Server>()) { init(); }

LoopbackHttpServer::LoopbackHttpServer(const Tls& tls)
    : server_(std::make_unique<httplib::SSLServer>(tls.cert_file.c_str(), tls.key_file.c_str())),
      tls_(true) {
  if (!server_->is_valid()) {
    throw std::runtime_error("LoopbackHttpServer: cannot load " + tls.cert_file + " / " +
                             tls.key_file);
  }
  init();
}

void LoopbackHttpServer::init() {
  server_->new_task_queue = [] { return new httplib::ThreadPool(kServerThreads); };
  // Short keep-alive so that stop() never waits long for an idle connection of a client
  // that does not close (ours always sends Connection: close).
  server_->set_keep_alive_timeout(1);
  port_ = server_->bind_to_any_port("127.0.0.1");
  if (port_ <= 0) throw std::runtime_error("LoopbackHttpServer: cannot bind 127.0.0.1");
}

LoopbackHttpServer::~LoopbackHttpServer() {
  std::vector<std::shared_ptr<ChunkFeed>> feeds;
  {
    std::lock_guard lock(mutex_);
    shutting_down_ = true;
    feeds = feeds_;
  }
  released_.notify_all();
  for (auto& feed : feeds) feed->shut_down();
  server_->stop();
  if (thread_.joinable()) thread_.join();
}

void LoopbackHttpServer::get(const std::string& pattern, Handler handler) {
  server_->Get(pattern, recorded(std::move(handler)));
}
void LoopbackHttpServer::post(const std::string& pattern, Handler handler) {
  server_->Post(pattern, recorded(std::move(handler)));
}
void LoopbackHttpServer::del(const std::string& pattern, Handler handler) {
  server_->Delete(pattern, recorded(std::move(handler)));
}

LoopbackHttpServer::Handler LoopbackHttpServer::recorded(Handler handler) {
  return [this, handler = std::move(handler)](const httplib::Request& req,
                                              httplib::Response& res) {
    RecordedRequest r;
    r.method = req.method;
    r.path = req.path;
    r.target = req.target;
    r.headers = req.headers;
    r.body = req.body;
    {
      std::lock_guard lock(mutex_);
      requests_.push_back(std::move(r));
    }
    handler(req, res);
  };
}

void LoopbackHttpServer::start() {
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  // Wait until the accept loop runs: stop() before that point would not stop it, and its
  // thread pool (which tests count) exists only from then on. An answer to a probe (404,
  // unrouted, not recorded) proves both.
  httplib::Client probe(url(""));
  probe.set_connection_timeout(5, 0);
  probe.set_read_timeout(5, 0);
  if (tls_) probe.enable_server_certificate_verification(false);
  for (int attempt = 0; attempt < 100; ++attempt) {
    if (probe.Get("/__loopback_ready")) return;
  }
  throw std::runtime_error("LoopbackHttpServer: the server never answered its readiness probe");
}

std::string LoopbackHttpServer::url(const std::string& path) const {
  return std::string(tls_ ? "https" : "http") + "://127.0.0.1:" + std::to_string(port_) + path;
}

std::shared_ptr<ChunkFeed> LoopbackHttpServer::make_feed() {
  std::shared_ptr<ChunkFeed> feed(new ChunkFeed);
  std::lock_guard lock(mutex_);
  feeds_.push_back(feed);
  return feed;
}

void LoopbackHttpServer::park(httplib::Response& res) {
  std::unique_lock lock(mutex_);
  ++parked_;
  released_.wait(lock, [&] { return shutting_down_; });
  --parked_;
  res.status = 503;
}

std::size_t LoopbackHttpServer::parked() const {
  std::lock_guard lock(mutex_);
  return parked_;
}

std::vector<RecordedRequest> LoopbackHttpServer::requests() const {
  std::lock_guard lock(mutex_);
  return requests_;
}

std::size_t LoopbackHttpServer::count(const std::string& method, const std::string& path) const {
  std::lock_guard lock(mutex_);
  std::size_t n = 0;
  for (const auto& r : requests_) {
    if (r.method == method && r.path == path) ++n;
  }
  return n;
}

}  // namespace mcprt::native::test
