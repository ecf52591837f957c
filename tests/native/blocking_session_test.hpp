#pragma once
// A test fixture that drives one ClientSession with blocking helpers: each pumps the
// NativeExecutor until the answer arrives (bounded by kWaitLimit). The HTTP and stdio
// session tests differ only in the transport they hand to connect_session().

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mcprt/client.hpp"
#include "mcprt/native/executor.hpp"
#include "native_test_support.hpp"

namespace mcprt::native::test {

class BlockingSessionTest : public ::testing::Test {
 protected:
  Status connect_session(std::unique_ptr<Transport> transport, const std::string& name,
                         Millis connect_timeout) {
    ClientOptions co;
    co.server_name = name;
    co.protocol = "legacy";  // the 2025 session over each transport (the probe: modern_wire_test)
    co.connect_timeout = connect_timeout;
    co.logger = &log_;
    co.roots = roots_from_directories({"/tmp"});
    co.on_close = [this](const Error& e) { closed_with_ = e; };
    co.on_notification = [this](const std::string& method, const json&) {
      notifications_.push_back(method);
    };
    session_ = ClientSession::create(ex_, std::move(transport), co);
    std::optional<Status> result;
    session_->connect([&](Status s) { result = std::move(s); });
    if (!pump_until(ex_, [&] { return result.has_value(); })) {
      return Error::make(ErrorCode::internal, "test: connect() never completed");
    }
    return *result;
  }

  Result<std::vector<json>> list_tools() {
    std::optional<Result<std::vector<json>>> result;
    session_->list_tools([&](Result<std::vector<json>> r) { result = std::move(r); });
    if (!pump_until(ex_, [&] { return result.has_value(); })) {
      return Error::make(ErrorCode::internal, "test: list_tools() never completed");
    }
    return std::move(*result);
  }

  Result<json> call(const std::string& tool, json args, CallOptions options = {}) {
    std::optional<Result<json>> result;
    session_->call_tool(tool, std::move(args), std::move(options),
                        [&](Result<json> r) { result = std::move(r); });
    if (!pump_until(ex_, [&] { return result.has_value(); })) {
      return Error::make(ErrorCode::internal, "test: call_tool() never completed");
    }
    return std::move(*result);
  }

  // Graceful close; true once the session reported the end.
  bool close_session() {
    if (!session_) return true;
    session_->close();
    return pump_until(ex_, [&] { return closed_with_.has_value(); });
  }

  // Before the derived fixture's launcher or HTTP client goes: destroying the session
  // destroys its transport (a stdio child is reaped).
  void TearDown() override {
    close_session();
    session_.reset();
  }

  NativeExecutor ex_;
  CapturingLogger log_;
  std::shared_ptr<ClientSession> session_;
  std::optional<Error> closed_with_;
  std::vector<std::string> notifications_;
};

}  // namespace mcprt::native::test
