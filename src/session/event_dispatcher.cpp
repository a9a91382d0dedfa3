#include "session/event_dispatcher.h"

#include <utility>
#include <vector>

namespace zklock::detail {
namespace {

// The dispatcher whose thread this is (null on every other thread).
thread_local const void* current_dispatcher = nullptr;

}  // namespace

EventDispatcher::~EventDispatcher() { stop(); }

void EventDispatcher::start() {
  started_ = true;
  thread_ = std::thread([state = state_] {
    current_dispatcher = state.get();
    loop(state);
  });
}

void EventDispatcher::stop() noexcept {
  std::deque<std::function<void()>> never_run;  // destroyed unlocked (they may hold the state)
  {
    std::lock_guard lock(state_->mutex);
    state_->stopping = true;
    state_->wake.notify_all();
    if (!started_) {  // no thread will ever run what was posted
      state_->running = false;
      never_run.swap(state_->tasks);
    }
  }
  if (!thread_.joinable()) return;
  if (on_thread()) {
    thread_.detach();  // it co-owns state_: it drains and ends on its own
  } else {
    thread_.join();
  }
}

bool EventDispatcher::try_post(std::function<void()>& task) {
  std::lock_guard lock(state_->mutex);
  if (state_->stopping) return false;
  state_->tasks.push_back(std::move(task));
  state_->wake.notify_one();
  return true;
}

void EventDispatcher::post(std::function<void()> task) {
  std::function<void()> dropped;  // destroyed unlocked: it may hold the state (a cycle otherwise)
  std::lock_guard lock(state_->mutex);
  if (state_->stopping && !state_->running) {
    dropped = std::move(task);  // the thread is gone: nothing would ever run it
    return;
  }
  state_->tasks.push_back(std::move(task));
  state_->wake.notify_one();
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

bool EventDispatcher::on_thread() const noexcept { return current_dispatcher == state_.get(); }

void EventDispatcher::loop(const std::shared_ptr<State>& state) {
  std::unique_lock lock(state->mutex);
  while (true) {
    state->wake.wait(lock, [&] { return state->stopping || !state->tasks.empty(); });
    if (state->tasks.empty()) {  // stopping and drained: later posts are dropped
      state->running = false;
      break;
    }
    auto task = std::move(state->tasks.front());
    state->tasks.pop_front();
    lock.unlock();
    try {
      task();
    } catch (...) {
      // A throwing user callback must not take the Session down.
    }
    task = nullptr;  // what it captured goes now, not under the lock
    lock.lock();
  }
}

Session::ListenerId EventDispatcher::add_listener(Session::Listener listener) {
  std::lock_guard lock(state_->listeners_mutex);
  const auto id = state_->next_listener_id++;
  state_->listeners.emplace(id, std::make_shared<Session::Listener>(std::move(listener)));
  return id;
}

void EventDispatcher::remove_listener(Session::ListenerId id) {
  {
    std::lock_guard lock(state_->listeners_mutex);
    state_->listeners.erase(id);
  }
  if (!on_thread()) {
    std::lock_guard delivery(state_->delivery_mutex);  // a running delivery finishes first
  }
}

void EventDispatcher::publish(const SessionEvent& event) {
  post([state = state_, event] {
    std::vector<std::pair<Session::ListenerId, std::shared_ptr<Session::Listener>>> snapshot;
    {
      std::lock_guard lock(state->listeners_mutex);
      snapshot.assign(state->listeners.begin(), state->listeners.end());
    }
    for (auto& [id, listener] : snapshot) {
      std::lock_guard delivery(state->delivery_mutex);
      {
        std::lock_guard lock(state->listeners_mutex);
        if (state->listeners.count(id) == 0) continue;
      }
      (*listener)(event);
    }
  });
}

}  // namespace zklock::detail
