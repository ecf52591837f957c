// ConnectTimeResolver (SPEC §2.4, connect time): `!command` and env-name values in `env`
// and `headers`, on a copy used only to connect.
//
// One resolve() = one Job: the values needing a command are collected, each distinct
// command is either answered from the cache, joined to a run already in flight (so
// identical concurrent commands run once), or started. When the Job's last command is
// back, its config is finished and `done` is posted. Everything runs on the executor; the
// shell runner's completions arrive there too (shell_runner.hpp).

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "mcprt/discovery.hpp"

namespace mcprt {

namespace {

std::string trim_whitespace(const std::string& s) {
  const char* ws = " \t\r\n\f\v";
  const std::size_t b = s.find_first_not_of(ws);
  if (b == std::string::npos) return {};
  const std::size_t e = s.find_last_not_of(ws);
  return s.substr(b, e - b + 1);
}

enum class Field { env, header };
const char* field_name(Field f) { return f == Field::env ? "env" : "header"; }

}  // namespace

struct ConnectTimeResolver::Impl : std::enable_shared_from_this<ConnectTimeResolver::Impl> {
  Executor& executor;
  ShellRunner* shell;
  EnvLookup env;
  Logger* logger;
  NullLogger null_logger;
  // False once the resolver is destroyed: a runner completion in progress keeps Impl
  // alive, but no `done` may run after the owner is gone.
  bool alive = true;

  // A value waiting for its command.
  struct Slot {
    Field field;
    std::string key;
  };
  struct Job {
    ServerConfig config;
    std::function<void(ServerConfig)> done;
    std::map<std::string, std::vector<Slot>> waiting;  // command → the values it fills
  };
  std::map<std::string, std::string> cache;                         // "!cmd" → trimmed stdout
  std::map<std::string, std::vector<std::weak_ptr<Job>>> in_flight;  // "!cmd" → jobs waiting
  std::vector<std::shared_ptr<Job>> jobs;                           // owned until finished

  Impl(Executor& ex, ShellRunner* sh, EnvLookup e, Logger* l)
      : executor(ex), shell(sh), env(std::move(e)), logger(l ? l : &null_logger) {}

  std::map<std::string, std::string>& map_of(ServerConfig& c, Field f) {
    return f == Field::env ? c.env : c.headers;
  }

  void warn(const std::string& server, Field f, const std::string& key, const std::string& why) {
    logger->warn("Server \"" + server + "\": " + field_name(f) + " \"" + key + "\" is dropped: " + why);
  }

  // Resolves what needs no command; registers the values that do.
  void scan(Job& job, Field f) {
    auto& values = map_of(job.config, f);
    for (auto it = values.begin(); it != values.end();) {
      const std::string& value = it->second;
      if (!value.empty() && value.front() == '!') {
        if (auto hit = cache.find(value); hit != cache.end()) {
          it->second = hit->second;
        } else if (!shell) {
          warn(job.config.name, f, it->first, "shell commands (\"!...\") are not available on this platform");
          it = values.erase(it);
          continue;
        } else {
          job.waiting[value].push_back(Slot{f, it->first});
        }
      } else if (env) {
        if (auto v = env(value); v && !v->empty()) it->second = *v;
      }
      ++it;
    }
  }

  void start(std::shared_ptr<Job> job) {
    if (!job->config.env_literal) scan(*job, Field::env);
    if (!job->config.origin_locked) scan(*job, Field::header);
    if (job->waiting.empty()) {
      finish_later(std::move(job));
      return;
    }
    jobs.push_back(job);
    // Copy the commands first: a finished command may complete the job synchronously
    // later, never here (runner callbacks are asynchronous), but keep the loop simple.
    std::vector<std::string> commands;
    for (const auto& [command, slots] : job->waiting) commands.push_back(command);
    for (const auto& command : commands) {
      auto& waiters = in_flight[command];
      waiters.push_back(job);
      if (waiters.size() > 1) continue;  // already running for another job
      std::weak_ptr<Impl> weak = shared_from_this();
      shell->run(command.substr(1), kShellCommandTimeout, [weak, command](Result<std::string> r) {
        if (auto self = weak.lock()) self->command_done(command, std::move(r));
      });
    }
  }

  void command_done(const std::string& command, Result<std::string> r) {
    std::optional<std::string> value;
    std::string why;
    if (!r.ok()) {
      why = "the command failed: " + r.error().message;
    } else if (std::string t = trim_whitespace(*r); t.empty()) {
      why = "the command printed nothing";
    } else {
      value = std::move(t);
      cache[command] = *value;
    }
    auto node = in_flight.extract(command);
    if (node.empty()) return;
    for (auto& weak_job : node.mapped()) {
      std::shared_ptr<Job> job = weak_job.lock();
      if (!job || !alive) continue;
      auto slots = job->waiting.extract(command);
      if (slots.empty()) continue;
      for (const Slot& s : slots.mapped()) {
        auto& values = map_of(job->config, s.field);
        if (value) {
          values[s.key] = *value;
        } else {
          values.erase(s.key);
          warn(job->config.name, s.field, s.key, why);
        }
      }
      if (job->waiting.empty()) {
        std::erase(jobs, job);
        finish_now(std::move(job));
      }
    }
  }

  // `done` must not run inside resolve(): post it.
  void finish_later(std::shared_ptr<Job> job) {
    std::weak_ptr<Impl> weak = shared_from_this();
    executor.post([weak, job = std::move(job)]() mutable {
      if (auto self = weak.lock(); self && self->alive) finish_now(std::move(job));
    });
  }
  static void finish_now(std::shared_ptr<Job> job) {
    auto done = std::move(job->done);
    if (done) done(std::move(job->config));
  }
};

ConnectTimeResolver::ConnectTimeResolver(Executor& executor, ShellRunner* shell, EnvLookup env, Logger* logger)
    : impl_(std::make_shared<Impl>(executor, shell, std::move(env), logger)) {}

ConnectTimeResolver::~ConnectTimeResolver() { impl_->alive = false; }

void ConnectTimeResolver::resolve(ServerConfig config, std::function<void(ServerConfig)> done) {
  auto job = std::make_shared<Impl::Job>();
  job->config = std::move(config);
  job->done = std::move(done);
  impl_->start(std::move(job));
}

}  // namespace mcprt
