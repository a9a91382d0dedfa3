// tests/support/raw_zk_client.cpp
#include "support/raw_zk_client.h"

#include <stdexcept>

namespace zklock::testing {
namespace {

void ignore_log_line(const char*) {}

}  // namespace

void ignore_watch_events(zhandle_t*, int, int, const char*, void*) {}

RawZkClient::RawZkClient(const std::string& connect, int session_timeout_ms) {
  handle_ = ::zookeeper_init2(connect.c_str(), &RawZkClient::on_event, session_timeout_ms, nullptr,
                              this, 0, ignore_log_line);
  if (handle_ == nullptr) throw std::runtime_error("zookeeper_init2 failed for " + connect);
}

RawZkClient::~RawZkClient() { ::zookeeper_close(handle_); }

void RawZkClient::on_event(zhandle_t*, int type, int state, const char*, void* context) {
  if (type != ZOO_SESSION_EVENT) return;
  auto* self = static_cast<RawZkClient*>(context);
  std::lock_guard<std::mutex> lock(self->mutex_);
  self->state_ = state;
  self->changed_.notify_all();
}

bool RawZkClient::wait_state(const std::function<bool(int)>& pred,
                             std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  return changed_.wait_for(lock, timeout, [&] { return pred(state_); });
}

bool RawZkClient::wait_connected(std::chrono::milliseconds timeout) {
  return wait_state([](int state) { return state == ZOO_CONNECTED_STATE; }, timeout);
}

int RawZkClient::create(const std::string& path, int flags, const std::string& data) {
  return ::zoo_create(handle_, path.c_str(), data.data(), static_cast<int>(data.size()),
                      &ZOO_OPEN_ACL_UNSAFE, flags, nullptr, 0);
}

int RawZkClient::exists(const std::string& path) {
  struct Stat stat {};
  return ::zoo_exists(handle_, path.c_str(), 0, &stat);
}

}  // namespace zklock::testing
