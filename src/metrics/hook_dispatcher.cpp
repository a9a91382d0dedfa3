#include "metrics/hook_dispatcher.h"

#include <utility>

namespace zklock::detail {

HookDispatcher::HookDispatcher(std::shared_ptr<EventHook> hook, std::size_t capacity)
    : hook_(std::move(hook)), capacity_(capacity == 0 ? 1 : capacity) {
  thread_ = std::thread([this] { run(); });
}

HookDispatcher::~HookDispatcher() { stop(); }

void HookDispatcher::stop() noexcept {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  std::lock_guard lock(join_mutex_);
  if (thread_.joinable()) thread_.join();
}

void HookDispatcher::post(std::function<void(EventHook&)> deliver) noexcept {
  {
    std::lock_guard lock(mutex_);
    if (stopping_ || queue_.size() >= capacity_) {
      dropped_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    try {
      queue_.push_back(std::move(deliver));
    } catch (...) {  // out of memory: the event is lost, the recipe goes on
      dropped_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
  }
  wake_.notify_one();
}

void HookDispatcher::run() {
  std::unique_lock lock(mutex_);
  while (true) {
    wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and everything queued was delivered
    auto deliver = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    try {
      deliver(*hook_);
    } catch (...) {
      dropped_.fetch_add(1, std::memory_order_relaxed);
    }
    lock.lock();
  }
}

}  // namespace zklock::detail
