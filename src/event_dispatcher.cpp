#include "event_dispatcher.h"

#include <utility>
#include <vector>

namespace zklock::detail {

EventDispatcher::~EventDispatcher() { stop(); }

void EventDispatcher::start() {
  thread_ = std::thread([this] { loop(); });
}

void EventDispatcher::stop() noexcept {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    wake_.notify_all();
  }
  if (!thread_.joinable()) return;
  if (on_thread()) {
    thread_.detach();
  } else {
    thread_.join();
  }
}

bool EventDispatcher::try_post(std::function<void()>& task) {
  std::lock_guard lock(mutex_);
  if (stopping_) return false;
  tasks_.push_back(std::move(task));
  wake_.notify_one();
  return true;
}

void EventDispatcher::post(std::function<void()> task) {
  std::lock_guard lock(mutex_);
  tasks_.push_back(std::move(task));
  wake_.notify_one();
}

void EventDispatcher::flush(std::chrono::milliseconds timeout) {
  struct Flag {
    std::mutex mutex;
    std::condition_variable cv;
    bool done = false;
  };
  auto flag = std::make_shared<Flag>();
  post([flag] {
    std::lock_guard lock(flag->mutex);
    flag->done = true;
    flag->cv.notify_all();
  });
  std::unique_lock lock(flag->mutex);
  flag->cv.wait_for(lock, timeout, [&] { return flag->done; });
}

bool EventDispatcher::on_thread() const noexcept {
  return std::this_thread::get_id() == thread_.get_id();
}

void EventDispatcher::loop() {
  std::unique_lock lock(mutex_);
  while (true) {
    wake_.wait(lock, [&] { return stopping_ || !tasks_.empty(); });
    if (tasks_.empty()) break;  // stopping and drained
    auto task = std::move(tasks_.front());
    tasks_.pop_front();
    lock.unlock();
    try {
      task();
    } catch (...) {
      // A throwing user callback must not take the Session down.
    }
    lock.lock();
  }
}

Session::ListenerId EventDispatcher::add_listener(Session::Listener listener) {
  std::lock_guard lock(listeners_mutex_);
  const auto id = next_listener_id_++;
  listeners_.emplace(id, std::make_shared<Session::Listener>(std::move(listener)));
  return id;
}

void EventDispatcher::remove_listener(Session::ListenerId id) {
  {
    std::lock_guard lock(listeners_mutex_);
    listeners_.erase(id);
  }
  if (!on_thread()) {
    std::lock_guard delivery(delivery_mutex_);  // a running delivery finishes first
  }
}

void EventDispatcher::publish(const SessionEvent& event) {
  post([this, event] {
    std::vector<std::pair<Session::ListenerId, std::shared_ptr<Session::Listener>>> snapshot;
    {
      std::lock_guard lock(listeners_mutex_);
      snapshot.assign(listeners_.begin(), listeners_.end());
    }
    for (auto& [id, listener] : snapshot) {
      std::lock_guard delivery(delivery_mutex_);
      {
        std::lock_guard lock(listeners_mutex_);
        if (listeners_.count(id) == 0) continue;
      }
      (*listener)(event);
    }
  });
}

}  // namespace zklock::detail
