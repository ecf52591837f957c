// NativeProcessLauncher: stdio MCP servers as child processes. What it implements is listed
// in mcprt/native/process_launcher.hpp.
//
// How a child is started: posix_spawn (a vfork-style clone, so the cost does not grow
// with the host's size), its own process group, pipes that are close-on-exec in the host.
// Boost.Process is not used any more: its v1 forks (5–8 ms per child on the loop thread
// for a large host), cannot report a failed chdir (bp::start_dir ignores it), creates
// async_pipes without close-on-exec, and does not reap a child whose exec failed.
//
// How a child is watched (asio on the executor's loop, no thread per child):
//  - stdout: async reads on the loop, delivered to on_data as they arrive;
//  - stderr: async reads from spawn on, into the tail ring and the debug log, so a chatty
//    child never blocks on a full stderr pipe;
//  - exit: a pidfd (readable once the child is a zombie) or, without pidfd, a waitid poll.
//    The status is peeked with WNOWAIT, the group is signalled while the zombie still pins
//    its pid, and only then the child is reaped.
//  - end of stream: when the exit is known the pending reads are cancelled; once both came
//    back (a completed read may still carry bytes), what is left in the pipes is drained
//    without blocking, and on_closed fires. So no byte written before the exit is lost.

#include "mcprt/native/process_launcher.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/detail/descriptor_read_op.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/version.hpp>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

extern char** environ;

// stdout reads that leave the pipe alone once it is drained. asio 1.74 (Debian 12's Boost)
// reads a descriptor again as soon as a new read is started ("speculatively"), which after
// every answer costs one read(2) that returns EAGAIN. For sockets asio already skips it:
// a read shorter than the buffer reports the socket exhausted, and the next read then
// waits for the reactor's next edge-triggered event. The specialization below gives stdout
// reads (and only them: the buffer type is ours) that same rule. It is sound on a pipe: a
// short read(2) took everything the pipe held, so any later byte arrives as a write that
// raises a new EPOLLIN edge (epoll keeps it even while no read is queued). Other Boost
// versions keep asio's own behaviour (one EAGAIN read per wake-up, nothing worse).
namespace mcprt::native::detail {
struct StdoutBuffer : boost::asio::mutable_buffer {
  StdoutBuffer(void* data, std::size_t size) : boost::asio::mutable_buffer(data, size) {}
};
}  // namespace mcprt::native::detail

#if BOOST_VERSION == 107400
namespace boost::asio::detail {
template <>
class descriptor_read_op_base<mcprt::native::detail::StdoutBuffer> : public reactor_op {
 public:
  descriptor_read_op_base(const boost::system::error_code& success_ec, int descriptor,
                          const mcprt::native::detail::StdoutBuffer& buffer,
                          func_type complete_func)
      : reactor_op(success_ec, &descriptor_read_op_base::do_perform, complete_func),
        descriptor_(descriptor),
        buffer_(buffer) {}

  static status do_perform(reactor_op* base) {
    auto* o = static_cast<descriptor_read_op_base*>(base);
    if (!descriptor_ops::non_blocking_read1(o->descriptor_, o->buffer_.data(),
                                            o->buffer_.size(), o->ec_, o->bytes_transferred_)) {
      return not_done;
    }
    // Bytes, but fewer than asked: the pipe is empty now.
    if (!o->ec_ && o->bytes_transferred_ < o->buffer_.size()) return done_and_exhausted;
    return done;
  }

 private:
  int descriptor_;
  boost::asio::mutable_buffer buffer_;
};
}  // namespace boost::asio::detail
#endif

namespace mcprt::native {

namespace asio = boost::asio;

namespace {

constexpr const char* kMinimalEnvKeys[] = {"HOME", "LOGNAME", "PATH", "SHELL",
                                           "TERM", "USER",    "LANG", "TMPDIR"};
constexpr const char* kDefaultPath = "/usr/local/bin:/usr/bin:/bin";
// Without pidfd, how often a running child's status is polled.
constexpr Millis kExitPollInterval{25};
// The drain after an exit reads at most this much per pipe: a straggler outside the
// process group could otherwise keep it going forever.
constexpr std::size_t kMaxDrainBytes = 8u * 1024 * 1024;
constexpr std::size_t kStderrReadBytes = 4096;

std::string errno_text(int err) { return std::error_code(err, std::system_category()).message(); }

const char* signal_name(int sig) {
  switch (sig) {
    case SIGTERM: return "SIGTERM";
    case SIGKILL: return "SIGKILL";
    case SIGINT: return "SIGINT";
    case SIGSEGV: return "SIGSEGV";
    case SIGABRT: return "SIGABRT";
    case SIGPIPE: return "SIGPIPE";
    case SIGHUP: return "SIGHUP";
    default: return nullptr;
  }
}

void ignore_sigpipe_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction sa {};
    sa.sa_handler = SIG_IGN;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGPIPE, &sa, nullptr);
  });
}

bool is_executable_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return false;
  return S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

std::string join_path(const std::string& dir, const std::string& name) {
  if (dir.empty()) return name;
  if (dir.back() == '/') return dir + name;
  return dir + "/" + name;
}

std::string absolute_from(const std::string& path, const std::string& cwd) {
  if (!path.empty() && path.front() == '/') return path;
  std::string base = cwd;
  if (base.empty()) {
    char buf[4096];
    if (::getcwd(buf, sizeof buf) != nullptr) base = buf;
  } else if (base.front() != '/') {
    char buf[4096];
    if (::getcwd(buf, sizeof buf) != nullptr) base = join_path(buf, base);
  }
  return join_path(base, path);
}

// A pipe whose both ends are close-on-exec from the start (pipe2), so no other child
// spawned meanwhile, by any thread, inherits them. dup2 in the child clears the flag on
// the copies it makes, so the child still gets its 0/1/2. Ends are moved above 2: if the
// host closed a standard descriptor, a pipe end could land on 0..2 and dup2 onto itself
// would keep close-on-exec.
struct CloexecPipe {
  int read_end = -1;
  int write_end = -1;
  ~CloexecPipe() {
    if (read_end >= 0) ::close(read_end);
    if (write_end >= 0) ::close(write_end);
  }
};

int move_above_stdio(int fd) {
  if (fd > 2) return fd;
  int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
  ::close(fd);
  return moved;
}

Status make_pipe(CloexecPipe& p) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    return Error::make(ErrorCode::transport, "pipe2 failed: " + errno_text(errno));
  }
  p.read_end = move_above_stdio(fds[0]);
  p.write_end = move_above_stdio(fds[1]);
  if (p.read_end < 0 || p.write_end < 0) {
    return Error::make(ErrorCode::transport, "fcntl(F_DUPFD_CLOEXEC) failed: " + errno_text(errno));
  }
  return {};
}

int open_pidfd(pid_t pid) {
#ifdef SYS_pidfd_open
  long fd = ::syscall(SYS_pidfd_open, pid, 0);
  return fd < 0 ? -1 : static_cast<int>(fd);
#else
  (void)pid;
  return -1;
#endif
}

// The last `cap` bytes of a stream, kept in one string that is trimmed when it reaches
// twice the cap (amortised O(1) per byte, no per-write copy of the whole tail).
class TailBuffer {
 public:
  explicit TailBuffer(std::size_t cap) : cap_(cap) {}
  void append(const char* data, std::size_t n) {
    if (cap_ == 0) return;
    if (n >= cap_) {
      buf_.assign(data + (n - cap_), cap_);
      return;
    }
    buf_.append(data, n);
    if (buf_.size() > 2 * cap_) buf_.erase(0, buf_.size() - cap_);
  }
  std::string str() const {
    std::string_view v(buf_);
    if (v.size() > cap_) {
      v.remove_prefix(v.size() - cap_);
      // Start on a UTF-8 character boundary.
      while (!v.empty() && (static_cast<unsigned char>(v.front()) & 0xC0) == 0x80) {
        v.remove_prefix(1);
      }
    }
    return std::string(v);
  }

 private:
  std::size_t cap_;
  std::string buf_;
};

// A read buffer that is not zero-filled: a page of it becomes resident only once a read
// wrote into it (a std::vector<char> of 32 KiB would make all of it resident per child).
class ReadBuffer {
 public:
  explicit ReadBuffer(std::size_t size) : data_(new char[size]), size_(size) {}
  char* data() { return data_.get(); }
  std::size_t size() const { return size_; }
  asio::mutable_buffer buffer() { return asio::buffer(data_.get(), size_); }
  detail::StdoutBuffer stdout_buffer() { return {data_.get(), size_}; }

 private:
  std::unique_ptr<char[]> data_;
  std::size_t size_;
};

// One spawned child and its pipes. Shared: every pending asio operation holds a reference,
// so the buffers and descriptors outlive the operations even when the ByteStream wrapper
// is destroyed first.
class ProcessStream final : public std::enable_shared_from_this<ProcessStream> {
 public:
  ProcessStream(asio::io_context& io, Logger* logger, const NativeProcessOptions& options,
                std::string label, pid_t pid, int stdin_fd, int stdout_fd, int stderr_fd,
                int pidfd)
      : io_(io),
        logger_(logger),
        options_(options),
        label_(std::move(label)),
        pid_(pid),
        stdin_(io, stdin_fd),
        stdout_(io, stdout_fd),
        stderr_(io, stderr_fd),
        close_timer_(io),
        eof_timer_(io),
        poll_timer_(io),
        out_buf_(options.read_chunk_bytes == 0 ? 4096 : options.read_chunk_bytes),
        err_buf_(kStderrReadBytes),
        tail_(options.stderr_tail_bytes) {
    if (pidfd >= 0) pidfd_.emplace(io, pidfd);
  }

  // Called once, right after the spawn: stderr and exit are watched from the start.
  void begin() {
    read_stderr();
    watch_exit();
  }

  void start(ByteStreamHandlers handlers) {
    if (started_ || destroyed_) return;
    started_ = true;
    handlers_ = std::move(handlers);
    if (finishing_) {
      // The child exited before start(); deliver its output and the end later, never
      // inside start().
      asio::post(io_, [self = shared_from_this()] { self->maybe_finish(); });
      return;
    }
    read_stdout();
  }

  Status write(std::string bytes) { return write_from(bytes, &bytes); }

  // `owned`: the caller's own string, moved into the queue when something must wait;
  // null when `bytes` are borrowed (copied only then).
  Status write_from(std::string_view bytes, std::string* owned) {
    if (ended_ || destroyed_ || phase_ != Phase::running) {
      return Error::make(ErrorCode::closed, "the process stream is closed");
    }
    if (!stdin_open_) {
      return Error::make(ErrorCode::closed,
                         "the process's stdin is closed" +
                             (stdin_error_.empty() ? std::string() : " (" + stdin_error_ + ")"));
    }
    if (bytes.empty()) return {};
    if (!writing_ && write_queue_.empty() && !wrote_this_turn_) {
      // Nothing in flight: write now, in the caller's turn. One write(2) and no async
      // operation when the pipe takes it all (the usual case); only what the pipe does
      // not take right now is queued for the asynchronous writer.
      wrote_this_turn_ = true;
      const std::size_t written = write_now(bytes);
      if (written == bytes.size() || !stdin_open_) return {};
      if (owned) {
        owned->erase(0, written);  // `bytes` views it: not read after this
        write_queue_.push_back(std::move(*owned));
      } else {
        write_queue_.emplace_back(bytes.substr(written));
      }
      flush_writes();
      return {};
    }
    // A burst (a second message before the child answered, or while a write is in
    // flight): queued, and written together, one writev for the lot, after this turn.
    if (owned) {
      write_queue_.push_back(std::move(*owned));
    } else {
      write_queue_.emplace_back(bytes);
    }
    if (!writing_ && !flush_posted_) {
      flush_posted_ = true;
      asio::post(io_, [self = shared_from_this()] {
        self->flush_posted_ = false;
        self->wrote_this_turn_ = false;
        if (self->destroyed_ || self->ended_ || self->writing_ || !self->stdin_open_) return;
        if (!self->write_queue_.empty()) self->flush_writes();
      });
    }
    return {};
  }

  void close() {
    if (ended_ || destroyed_ || phase_ != Phase::running) return;
    phase_ = Phase::closing;
    close_stdin();
    if (finishing_ || reaped_) return;  // the exit is already being reported
    // A child that answered something may be finishing work: it gets the stdin grace. One
    // that never wrote is still starting (or hung): nothing of it is worth waiting for.
    schedule_escalation(spoke_ ? options_.stdin_close_grace : options_.silent_stdin_close_grace, SIGTERM);
  }

  std::string diagnostics_tail() const { return tail_.str(); }

  // The ByteStream wrapper is going away: no callback may run from now on, and no child
  // may outlive it.
  void destroy() {
    if (destroyed_) return;
    destroyed_ = true;
    if (!reaped_) {
      signal_group(SIGKILL);
      int status = 0;
      pid_t r;
      do {
        r = ::waitpid(pid_, &status, 0);
      } while (r < 0 && errno == EINTR);
      reaped_ = true;
    }
    close_descriptors();
    close_exit_watch();
    close_timer_.cancel();
    eof_timer_.cancel();
    if (callback_depth_ == 0) handlers_ = {};
  }

 private:
  enum class Phase { running, closing };

  // ---- writing -----------------------------------------------------------------------

  // One non-blocking write(2) of as much of `bytes` as the pipe takes now. Returns how much
  // was written; a failure other than a full pipe is handled as on_written handles one.
  std::size_t write_now(std::string_view bytes) {
    if (!stdin_nonblocking_) {
      boost::system::error_code ec;
      stdin_.non_blocking(true, ec);
      if (ec) return 0;  // the asynchronous writer will report what is wrong
      stdin_nonblocking_ = true;
    }
    ssize_t n;
    do {
      n = ::write(stdin_.native_handle(), bytes.data(), bytes.size());
    } while (n < 0 && errno == EINTR);
    if (n >= 0) return static_cast<std::size_t>(n);
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      on_written(boost::system::error_code(errno, boost::system::system_category()));
    }
    return 0;
  }

  void flush_writes() {
    write_batch_.swap(write_queue_);
    write_queue_.clear();
    std::vector<asio::const_buffer> buffers;
    buffers.reserve(write_batch_.size());
    for (const std::string& s : write_batch_) buffers.emplace_back(asio::buffer(s));
    writing_ = true;
    asio::async_write(stdin_, buffers,
                      [self = shared_from_this()](const boost::system::error_code& ec,
                                                  std::size_t) { self->on_written(ec); });
  }

  void on_written(const boost::system::error_code& ec) {
    writing_ = false;
    write_batch_.clear();
    if (destroyed_ || ended_) return;
    if (ec) {
      if (ec != asio::error::operation_aborted && stdin_open_) {
        // Usually EPIPE: the child closed its stdin or is exiting. The exit, if it comes,
        // ends the stream with its code; until then writes fail.
        stdin_error_ = ec.message();
        log(LogLevel::warn, "writing to the process's stdin failed: " + stdin_error_);
        close_stdin();
      }
      return;
    }
    if (!write_queue_.empty() && stdin_open_) flush_writes();
  }

  void close_stdin() {
    stdin_open_ = false;
    write_queue_.clear();
    boost::system::error_code ec;
    stdin_.close(ec);  // EOF for the child; cancels a write in flight
  }

  // ---- reading -----------------------------------------------------------------------

  void read_stdout() {
    out_reading_ = true;
    stdout_.async_read_some(out_buf_.stdout_buffer(),
                            [self = shared_from_this()](const boost::system::error_code& ec,
                                                        std::size_t n) { self->on_stdout(ec, n); });
  }

  void on_stdout(const boost::system::error_code& ec, std::size_t n) {
    out_reading_ = false;
    if (destroyed_ || ended_) return;
    if (n > 0) {
      spoke_ = true;
      // The child answered: what is written from here on is a new turn (see write()).
      wrote_this_turn_ = false;
      deliver(std::string_view(out_buf_.data(), n));
      if (destroyed_ || ended_) return;
    }
    if (finishing_) {
      maybe_finish();
      return;
    }
    if (ec) {
      if (ec == asio::error::operation_aborted) return;
      if (ec != asio::error::eof) log(LogLevel::debug, "reading stdout failed: " + ec.message());
      on_stdout_eof();
      return;
    }
    read_stdout();
  }

  void on_stdout_eof() {
    stdout_eof_ = true;
    // While closing, the close sequence already escalates towards an exit.
    if (phase_ == Phase::closing) return;
    // Usually the exit follows within microseconds; wait briefly for its code.
    eof_timer_.expires_after(options_.eof_exit_wait);
    eof_timer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
      if (!ec) self->on_eof_without_exit();
    });
  }

  void on_eof_without_exit() {
    if (destroyed_ || ended_ || finishing_ || reaped_) return;
    // A child that closed its stdout can never answer again: end the stream now and
    // terminate the child in the background (this object keeps watching until it is
    // reaped; the destructor SIGKILLs it if it goes first).
    Error error = Error::make(ErrorCode::transport,
                              "the server closed its stdout but kept running; terminating it");
    end_stream(error, std::nullopt);
    signal_group(SIGTERM);
    schedule_escalation(options_.sigterm_grace, SIGKILL);
  }

  void read_stderr() {
    err_reading_ = true;
    stderr_.async_read_some(err_buf_.buffer(),
                            [self = shared_from_this()](const boost::system::error_code& ec,
                                                        std::size_t n) { self->on_stderr(ec, n); });
  }

  void on_stderr(const boost::system::error_code& ec, std::size_t n) {
    err_reading_ = false;
    if (destroyed_ || ended_) return;
    if (n > 0) consume_stderr(err_buf_.data(), n);
    if (finishing_) {
      maybe_finish();
      return;
    }
    if (ec) return;  // EOF (or error): the exit watch ends the stream
    read_stderr();
  }

  void consume_stderr(const char* data, std::size_t n) {
    tail_.append(data, n);
    if (!logger_) return;
    std::string_view rest(data, n);
    while (!rest.empty()) {
      std::size_t nl = rest.find('\n');
      std::string_view piece = rest.substr(0, nl);
      if (!err_line_cut_) {
        std::size_t room = options_.stderr_log_line_bytes > err_line_.size()
                               ? options_.stderr_log_line_bytes - err_line_.size()
                               : 0;
        if (piece.size() > room) {
          err_line_.append(piece.substr(0, room));
          err_line_cut_ = true;
        } else {
          err_line_.append(piece);
        }
      }
      if (nl == std::string_view::npos) break;
      flush_stderr_line();
      rest.remove_prefix(nl + 1);
    }
  }

  void flush_stderr_line() {
    if (!err_line_.empty() && err_line_.back() == '\r') err_line_.pop_back();
    if (!err_line_.empty() && logger_) {
      std::string msg = "stderr: " + err_line_;
      if (err_line_cut_) msg += " ...(line cut)";
      log(LogLevel::debug, msg);
    }
    err_line_.clear();
    err_line_cut_ = false;
  }

  // Reads what is in a pipe right now, without blocking, up to kMaxDrainBytes.
  template <class Sink>
  void drain(asio::posix::stream_descriptor& d, ReadBuffer& buf, Sink&& sink) {
    if (!d.is_open()) return;
    boost::system::error_code ec;
    d.non_blocking(true, ec);
    if (ec) return;
    std::size_t total = 0;
    while (total < kMaxDrainBytes && !destroyed_ && !ended_) {
      std::size_t n = d.read_some(buf.buffer(), ec);
      if (n > 0) {
        total += n;
        sink(buf.data(), n);
      }
      if (ec) return;  // would_block, eof or an error: nothing more now
    }
  }

  void deliver(std::string_view bytes) {
    if (!handlers_.on_data) return;
    ++callback_depth_;
    handlers_.on_data(bytes);
    --callback_depth_;
    if ((destroyed_ || ended_) && callback_depth_ == 0) handlers_ = {};
  }

  // ---- exit --------------------------------------------------------------------------

  void watch_exit() {
    if (pidfd_) {
      pidfd_->async_wait(asio::posix::descriptor_base::wait_read,
                         [self = shared_from_this()](const boost::system::error_code& ec) {
                           if (!ec) self->on_exit_ready();
                         });
    } else {
      poll_timer_.expires_after(kExitPollInterval);
      poll_timer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
        if (!ec) self->on_exit_ready();
      });
    }
  }

  void on_exit_ready() {
    if (destroyed_ || reaped_) return;
    if (!collect_exit()) {
      watch_exit();
      return;
    }
    if (!ended_) begin_finish();
  }

  // Peeks at the child's status; when it exited, kills what is left of its group and reaps
  // it. Returns whether it exited.
  bool collect_exit() {
    siginfo_t info;
    std::memset(&info, 0, sizeof info);
    int r;
    do {
      r = ::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT);
    } while (r < 0 && errno == EINTR);
    if (r < 0) {
      // ECHILD: someone else in this process reaped it; its status is lost and its pid
      // may be reused, so it must never be signalled again.
      exit_known_ = true;
      reaped_ = true;
      close_exit_watch();
      return true;
    }
    if (info.si_pid != pid_) return false;
    exit_known_ = true;
    exit_code_ = info.si_code == CLD_EXITED ? info.si_status : -info.si_status;
    // Stragglers (grandchildren still in the group) would keep pipes open and outlive the
    // server. The zombie leader still pins the group id, so this cannot hit a recycled one.
    ::killpg(pid_, SIGKILL);
    int status = 0;
    pid_t w;
    do {
      w = ::waitpid(pid_, &status, 0);
    } while (w < 0 && errno == EINTR);
    reaped_ = true;
    close_exit_watch();
    close_timer_.cancel();
    return true;
  }

  void begin_finish() {
    if (finishing_ || ended_) return;
    finishing_ = true;
    close_timer_.cancel();
    eof_timer_.cancel();
    close_stdin();
    boost::system::error_code ec;
    if (out_reading_) stdout_.cancel(ec);
    if (err_reading_) stderr_.cancel(ec);
    maybe_finish();
  }

  void maybe_finish() {
    if (!finishing_ || ended_ || destroyed_ || !started_) return;
    if (out_reading_ || err_reading_) return;  // their handlers call back here
    drain(stdout_, out_buf_, [this](const char* d, std::size_t n) { deliver({d, n}); });
    if (destroyed_ || ended_) return;
    drain(stderr_, err_buf_, [this](const char* d, std::size_t n) { consume_stderr(d, n); });
    if (destroyed_ || ended_) return;
    if (phase_ == Phase::closing) {
      end_stream(Error::make(ErrorCode::closed, "closed"), exit_code_);
    } else {
      end_stream(Error::make(ErrorCode::exited, describe_exit()), exit_code_);
    }
  }

  std::string describe_exit() const {
    if (!exit_code_) return "the server process exited (status unknown)";
    if (*exit_code_ >= 0) return "the server process exited (code " + std::to_string(*exit_code_) + ")";
    const int sig = -*exit_code_;
    std::string text = "the server process was killed by signal " + std::to_string(sig);
    if (const char* name = signal_name(sig)) text += std::string(" (") + name + ")";
    return text;
  }

  void end_stream(Error error, std::optional<int> exit_code) {
    if (ended_) return;
    ended_ = true;
    if (!err_line_.empty()) flush_stderr_line();
    StreamClosed closed{std::move(error), exit_code, tail_.str()};
    eof_timer_.cancel();
    close_descriptors();
    if (started_ && !destroyed_) {
      auto on_closed = std::move(handlers_.on_closed);
      handlers_.on_closed = nullptr;
      if (on_closed) {
        ++callback_depth_;
        on_closed(closed);
        --callback_depth_;
      }
    }
    if (callback_depth_ == 0) handlers_ = {};
  }

  // ---- signals -----------------------------------------------------------------------

  void signal_group(int sig) {
    if (reaped_) return;  // the pid may belong to someone else now
    if (::killpg(pid_, sig) != 0) ::kill(pid_, sig);
  }

  void schedule_escalation(Millis after, int sig) {
    close_timer_.expires_after(after);
    close_timer_.async_wait([self = shared_from_this(), sig](const boost::system::error_code& ec) {
      if (ec || self->destroyed_ || self->reaped_) return;
      self->signal_group(sig);
      if (sig == SIGTERM) self->schedule_escalation(self->options_.sigterm_grace, SIGKILL);
    });
  }

  // ---- teardown ----------------------------------------------------------------------

  void close_descriptors() {
    boost::system::error_code ec;
    stdin_open_ = false;
    write_queue_.clear();
    stdin_.close(ec);
    stdout_.close(ec);
    stderr_.close(ec);
  }

  void close_exit_watch() {
    boost::system::error_code ec;
    if (pidfd_) pidfd_->close(ec);
    poll_timer_.cancel();
  }

  void log(LogLevel level, const std::string& message) {
    if (!logger_) return;
    logger_->log(level, label_.empty() ? message : "[" + label_ + "] " + message);
  }

  asio::io_context& io_;
  Logger* logger_;
  NativeProcessOptions options_;
  std::string label_;
  pid_t pid_;

  asio::posix::stream_descriptor stdin_;
  asio::posix::stream_descriptor stdout_;
  asio::posix::stream_descriptor stderr_;
  std::optional<asio::posix::stream_descriptor> pidfd_;
  asio::steady_timer close_timer_;
  asio::steady_timer eof_timer_;
  asio::steady_timer poll_timer_;

  ReadBuffer out_buf_;
  ReadBuffer err_buf_;
  TailBuffer tail_;
  std::string err_line_;
  bool err_line_cut_ = false;

  std::vector<std::string> write_queue_;
  std::vector<std::string> write_batch_;  // owned by the async_write in flight
  bool writing_ = false;
  bool stdin_open_ = true;
  bool stdin_nonblocking_ = false;
  // write() wrote directly since the child last wrote to stdout: a second message before
  // the answer is part of a burst, queued and flushed as one writev (flush_posted_).
  bool wrote_this_turn_ = false;
  bool flush_posted_ = false;
  std::string stdin_error_;

  ByteStreamHandlers handlers_;
  int callback_depth_ = 0;

  Phase phase_ = Phase::running;
  bool started_ = false;
  bool destroyed_ = false;
  bool out_reading_ = false;
  bool err_reading_ = false;
  bool stdout_eof_ = false;
  bool spoke_ = false;  // the child wrote to stdout at least once
  bool exit_known_ = false;
  bool reaped_ = false;
  bool finishing_ = false;  // exit known: waiting for the reads to come back, then drain
  bool ended_ = false;      // on_closed fired (or the stream ended before start())
  std::optional<int> exit_code_;
};

// The ByteStream the core holds. Destroying it force-kills and reaps the child at once;
// the shared ProcessStream lingers only until its cancelled operations came back.
class NativeProcessByteStream final : public ByteStream {
 public:
  explicit NativeProcessByteStream(std::shared_ptr<ProcessStream> impl) : impl_(std::move(impl)) {}
  ~NativeProcessByteStream() override { impl_->destroy(); }

  void start(ByteStreamHandlers handlers) override { impl_->start(std::move(handlers)); }
  Status write(std::string bytes) override { return impl_->write(std::move(bytes)); }
  Status write_copy(std::string_view bytes) override { return impl_->write_from(bytes, nullptr); }
  void close() override { impl_->close(); }
  std::string diagnostics_tail() const override { return impl_->diagnostics_tail(); }

 private:
  std::shared_ptr<ProcessStream> impl_;
};

std::string env_key(const std::string& entry) { return entry.substr(0, entry.find('=')); }

}  // namespace

std::vector<std::string> child_environment(const ProcessSpec& spec) {
  std::vector<std::string> env;
  auto set = [&env](const std::string& key, const std::string& value) {
    for (std::string& e : env) {
      if (env_key(e) == key) {
        e = key + "=" + value;
        return;
      }
    }
    env.push_back(key + "=" + value);
  };
  if (spec.inherit_env == ProcessSpec::InheritEnv::full) {
    for (char** e = environ; e && *e; ++e) {
      std::string entry(*e);
      if (entry.find('=') == std::string::npos || entry.front() == '=') continue;
      env.push_back(std::move(entry));
    }
  } else {
    for (const char* key : kMinimalEnvKeys) {
      if (const char* v = std::getenv(key)) set(key, v);
    }
  }
  for (const auto& [key, value] : spec.env) {
    if (key.empty() || key.find('=') != std::string::npos) continue;
    set(key, value);
  }
  return env;
}

Result<std::string> resolve_command(const std::string& command, const std::string& path_var,
                                    const std::string& cwd) {
  if (command.empty()) return Error::make(ErrorCode::invalid_argument, "empty command");
  if (command.find('/') != std::string::npos) {
    std::string path = absolute_from(command, cwd);
    if (is_executable_file(path)) return path;
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
      return Error::make(ErrorCode::transport, "command \"" + command + "\" not found (" + path +
                                                   ": " + errno_text(errno) + ")");
    }
    return Error::make(ErrorCode::transport,
                       "command \"" + command + "\" is not an executable file (" + path + ")");
  }
  std::string_view rest(path_var);
  while (true) {
    std::size_t colon = rest.find(':');
    std::string dir(rest.substr(0, colon));
    if (dir.empty()) dir = ".";  // an empty PATH element means the current directory
    std::string candidate = absolute_from(join_path(dir, command), cwd);
    if (is_executable_file(candidate)) return candidate;
    if (colon == std::string_view::npos) break;
    rest.remove_prefix(colon + 1);
  }
  return Error::make(ErrorCode::transport, "command \"" + command + "\" not found in PATH");
}

NativeProcessLauncher::NativeProcessLauncher(NativeExecutor& executor, Logger* logger,
                                             NativeProcessOptions options)
    : executor_(executor), logger_(logger), options_(options) {
  ignore_sigpipe_once();
}

NativeProcessLauncher::~NativeProcessLauncher() = default;

Result<std::unique_ptr<ByteStream>> NativeProcessLauncher::launch(const ProcessSpec& spec) {
  if (spec.command.empty()) {
    return Error::make(ErrorCode::invalid_argument, "no command to run (empty \"command\")");
  }
  if (!spec.cwd.empty()) {
    struct stat st {};
    if (::stat(spec.cwd.c_str(), &st) != 0) {
      return Error::make(ErrorCode::transport, "working directory \"" + spec.cwd +
                                                   "\" is not usable: " + errno_text(errno));
    }
    if (!S_ISDIR(st.st_mode)) {
      return Error::make(ErrorCode::transport,
                         "working directory \"" + spec.cwd + "\" is not a directory");
    }
  }

  std::vector<std::string> env = child_environment(spec);
  std::string path_var = kDefaultPath;
  for (const std::string& e : env) {
    if (e.rfind("PATH=", 0) == 0) path_var = e.substr(5);
  }
  Result<std::string> exe = resolve_command(spec.command, path_var, spec.cwd);
  if (!exe) return std::move(exe).error();

  // The child's envp, handed to execve directly.
  std::vector<char*> envp;
  envp.reserve(env.size() + 1);
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);

  CloexecPipe in_pipe, out_pipe, err_pipe;
  for (CloexecPipe* p : {&in_pipe, &out_pipe, &err_pipe}) {
    if (Status s = make_pipe(*p); !s) return std::move(s).error();
  }
  // posix_spawn, not fork: glibc's clones the parent with CLONE_VM|CLONE_VFORK, so starting
  // a server costs the same whatever the host's size (fork copied the page tables: 5–8 ms
  // per child for a large host, all on the loop thread), and the exec's outcome comes
  // back as the return value (a failed exec or chdir is reaped by posix_spawn itself).
  // In the child, in this order: own process group, empty signal mask, SIGPIPE back to
  // SIG_DFL (the host ignores it), the three dup2s (which clear close-on-exec on the
  // copies), the chdir; then execve with `envp`. Every other descriptor of ours is
  // close-on-exec, so the child inherits none of them.
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  if (int rc = ::posix_spawn_file_actions_init(&actions); rc != 0) {
    return Error::make(ErrorCode::transport, "failed to start \"" + spec.command +
                                                 "\": posix_spawn_file_actions_init: " + errno_text(rc));
  }
  if (int rc = ::posix_spawnattr_init(&attr); rc != 0) {
    ::posix_spawn_file_actions_destroy(&actions);
    return Error::make(ErrorCode::transport, "failed to start \"" + spec.command +
                                                 "\": posix_spawnattr_init: " + errno_text(rc));
  }
  struct SpawnState {
    posix_spawn_file_actions_t* actions;
    posix_spawnattr_t* attr;
    ~SpawnState() {
      ::posix_spawn_file_actions_destroy(actions);
      ::posix_spawnattr_destroy(attr);
    }
  } spawn_state{&actions, &attr};

  sigset_t none, pipe_only;
  sigemptyset(&none);
  sigemptyset(&pipe_only);
  sigaddset(&pipe_only, SIGPIPE);
  const std::string cwd_text = spec.cwd;
  int rc = ::posix_spawnattr_setflags(
      &attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  if (rc == 0) rc = ::posix_spawnattr_setpgroup(&attr, 0);  // its own group: signal the tree
  if (rc == 0) rc = ::posix_spawnattr_setsigmask(&attr, &none);
  if (rc == 0) rc = ::posix_spawnattr_setsigdefault(&attr, &pipe_only);
  if (rc == 0) rc = ::posix_spawn_file_actions_adddup2(&actions, in_pipe.read_end, STDIN_FILENO);
  if (rc == 0) rc = ::posix_spawn_file_actions_adddup2(&actions, out_pipe.write_end, STDOUT_FILENO);
  if (rc == 0) rc = ::posix_spawn_file_actions_adddup2(&actions, err_pipe.write_end, STDERR_FILENO);
  if (rc == 0 && !cwd_text.empty()) {
    rc = ::posix_spawn_file_actions_addchdir_np(&actions, cwd_text.c_str());
  }
  if (rc != 0) {
    return Error::make(ErrorCode::transport,
                       "failed to start \"" + spec.command + "\": preparing the spawn: " + errno_text(rc));
  }

  std::vector<std::string> argv_text;
  argv_text.reserve(spec.args.size() + 1);
  argv_text.push_back(exe.value());
  for (const std::string& a : spec.args) argv_text.push_back(a);
  std::vector<char*> argv;
  argv.reserve(argv_text.size() + 1);
  for (std::string& a : argv_text) argv.push_back(a.data());
  argv.push_back(nullptr);

  pid_t pid = -1;
  rc = ::posix_spawn(&pid, exe.value().c_str(), &actions, &attr, argv.data(), envp.data());
  // The child's ends are its own now (or nobody's): close ours.
  for (int* fd : {&in_pipe.read_end, &out_pipe.write_end, &err_pipe.write_end}) {
    ::close(*fd);
    *fd = -1;
  }
  if (rc != 0) {
    std::string why = errno_text(rc);
    if (!cwd_text.empty() && (rc == ENOENT || rc == EACCES || rc == ENOTDIR)) {
      struct stat st {};
      if (::stat(cwd_text.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) ||
          ::access(cwd_text.c_str(), X_OK) != 0) {
        why = "cannot change to the working directory \"" + cwd_text + "\": " + why;
      }
    }
    return Error::make(ErrorCode::transport,
                       "failed to start \"" + spec.command + "\" (" + exe.value() + "): " + why);
  }

  int pidfd = open_pidfd(pid);
  auto impl = std::make_shared<ProcessStream>(executor_.io_context(), logger_, options_,
                                              spec.label, pid, in_pipe.write_end,
                                              out_pipe.read_end, err_pipe.read_end, pidfd);
  in_pipe.write_end = out_pipe.read_end = err_pipe.read_end = -1;  // owned by impl now
  impl->begin();
  if (logger_) {
    logger_->debug((spec.label.empty() ? std::string() : "[" + spec.label + "] ") + "started " +
                   exe.value() + " (pid " + std::to_string(pid) + ")");
  }
  return std::unique_ptr<ByteStream>(std::make_unique<NativeProcessByteStream>(std::move(impl)));
}

}  // namespace mcprt::native
