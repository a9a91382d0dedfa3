// LeaderWatch (leader_watch.h): the thread of one Election::observe().
#include "election/leader_watch.h"

#include <algorithm>
#include <utility>

#include "lock/holder_identity.h"
#include "lock/mutex_core.h"
#include "zklock/contender.h"

namespace zklock::detail {

Leader leader_of(const std::string& path, const Contender& contender) {
  Leader leader;
  leader.node_path = path + "/" + contender.name;
  leader.value = is_holder_identity(contender.data)
                     ? identity_string_field(contender.data, "description").value_or("")
                     : contender.data;
  leader.session_id = contender.ephemeral_owner;
  leader.term = FencingToken(contender.czxid, contender.sequence);
  leader.naming = contender.naming;
  leader.host = identity_string_field(contender.data, "host").value_or("");
  leader.pid = identity_integer_field(contender.data, "pid").value_or(0);
  if (const auto since = identity_integer_field(contender.data, "held_since")) {
    leader.since = std::chrono::system_clock::time_point(std::chrono::milliseconds(*since));
  }
  return leader;
}

std::vector<Contender> participants(std::vector<std::string> names) {
  std::vector<Contender> out;
  for (auto& name : queue_order(std::move(names))) {
    const auto parsed = parse_contender_name(name);
    if (!parsed || parsed->kind != ContenderKind::kExclusive) continue;
    Contender c;
    c.name = std::move(name);
    c.sequence = parsed->sequence;
    c.naming = parsed->naming;
    c.kind = parsed->kind;
    out.push_back(std::move(c));
  }
  return out;
}

std::optional<Leader> read_leader(SessionCore& session, const std::string& path,
                                  const std::string& context) {
  const auto timeout = session.negotiated_timeout();
  for (int attempt = 0; attempt < 16; ++attempt) {
    auto listing = session.call(
        [&](ClientConnection& c, Completion done) { c.get_children(path, std::move(done)); },
        timeout);
    if (listing.rc == Errc::no_node) return std::nullopt;
    if (listing.rc != Errc::ok) throw_error(listing.rc, context);
    auto queue = participants(std::move(listing.children));
    if (queue.empty()) return std::nullopt;
    Contender first = std::move(queue.front());
    const auto read = session.call(
        [&](ClientConnection& c, Completion done) {
          c.get_data(path + "/" + first.name, {}, std::move(done));
        },
        timeout);
    if (read.rc == Errc::no_node) continue;  // it went between the two reads: look again
    if (read.rc != Errc::ok && read.rc != Errc::no_auth) throw_error(read.rc, context);
    first.data = read.rc == Errc::ok ? read.value : std::string();
    first.czxid = read.stat.czxid;
    first.ephemeral_owner = read.stat.ephemeral_owner;
    return leader_of(path, first);
  }
  throw Error(Errc::runtime_inconsistency,
              context + ": the leader of " + path + " kept changing between two reads");
}

bool may_have_missed_terms(const std::vector<std::string>& previous_queue,
                           const std::string& previous_leader,
                           const std::vector<std::string>& queue) {
  if (queue.empty()) return false;
  for (const auto& name : previous_queue) {
    if (name == queue.front()) break;  // behind the leader now: never led
    if (name == previous_leader) continue;
    if (std::find(queue.begin(), queue.end(), name) == queue.end()) return true;
  }
  return false;
}

LeaderWatch::LeaderWatch(std::shared_ptr<SessionCore> session, std::string path,
                         std::function<void(const LeaderChange&)> on_change)
    : session_(std::move(session)), path_(std::move(path)), on_change_(std::move(on_change)) {}

LeaderWatch::~LeaderWatch() {
  // The thread holds a reference: when this runs, it has ended (or this is the thread itself,
  // after stop() detached it).
  if (thread_.joinable()) thread_.detach();
}

void LeaderWatch::start() {
  active_ = true;
  session_->add_observer(shared_from_this());
  thread_ = std::thread([self = shared_from_this()] { self->run(); });
}

void LeaderWatch::stop() noexcept {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  stopped_ = true;
  woken_.notify_all();
  session_->remove_observer(this);
  if (!thread_.joinable()) return;
  // From a delivery (the event thread) or the thread itself, do not wait: the thread may be in a
  // read that lasts up to the session timeout. It ends by itself and delivers nothing more.
  if (std::this_thread::get_id() == thread_.get_id() || session_->on_events_thread()) {
    thread_.detach();
  } else {
    thread_.join();
  }
}

void LeaderWatch::wake() {
  {
    std::lock_guard lock(mutex_);
    dirty_ = true;
  }
  woken_.notify_all();
}

void LeaderWatch::watch_fired(bool children, std::uint64_t epoch) {
  {
    std::lock_guard lock(mutex_);
    if (epoch != (children ? children_epoch_ : data_epoch_)) return;  // a replaced watch's
    (children ? children_fired_ : data_fired_) = true;
    dirty_ = true;
  }
  woken_.notify_all();
}

void LeaderWatch::run() {
  Look last = Look::kDone;
  while (true) {
    {
      std::unique_lock lock(mutex_);
      const auto ready = [&] { return stopping_ || dirty_; };
      if (last == Look::kRetryLater) {
        woken_.wait_for(lock, std::chrono::seconds(1), ready);
      } else {
        woken_.wait(lock, ready);
      }
      if (stopping_) break;
      dirty_ = false;
    }
    if (session_->closed()) break;
    last = look();
  }
  drop_watches();
  active_ = false;
}

LeaderWatch::Look LeaderWatch::look() {
  auto connection = session_->connection();
  if (!connection || !session_->connected()) return Look::kWaitForSession;
  if (connection != watched_on_) {
    // A new session (generation): the old one's watches went with it.
    watched_on_ = connection;
    children_watch_ = data_watch_ = 0;
    data_watch_path_.clear();
  }
  {
    std::lock_guard lock(mutex_);
    if (children_fired_) children_watch_ = 0;
    if (data_fired_) {
      data_watch_ = 0;
      data_watch_path_.clear();
    }
    children_fired_ = data_fired_ = false;
  }
  const auto timeout = session_->negotiated_timeout();
  const std::weak_ptr<LeaderWatch> weak = weak_from_this();
  // A new watch of a kind: its epoch becomes the current one.
  auto on_event = [this, weak](bool children) {
    std::uint64_t epoch = 0;
    {
      std::lock_guard lock(mutex_);
      epoch = ++(children ? children_epoch_ : data_epoch_);
    }
    return [weak, children, epoch](WatchEventType) {
      if (auto self = weak.lock()) self->watch_fired(children, epoch);
    };
  };
  std::optional<Leader> now;
  std::vector<Contender> queue;
  {
    // The listing, setting the children watch if it is not set (one read either way).
    std::uint64_t id = 0;
    const bool watch = children_watch_ == 0;
    OpResult r = SessionCore::call_on(
        *connection,
        [&](ClientConnection& c, Completion done) {
          if (watch) {
            id = c.get_children_watched(path_, on_event(true), std::move(done));
          } else {
            c.get_children(path_, std::move(done));
          }
        },
        timeout);
    if (r.rc != Errc::ok && r.rc != Errc::no_node) return Look::kRetryLater;
    if (r.rc == Errc::ok && watch) children_watch_ = id;
    if (r.rc == Errc::ok) queue = participants(std::move(r.children));
  }
  if (!queue.empty()) {
    Contender first = queue.front();
    const std::string leader_path = path_ + "/" + first.name;
    if (data_watch_path_ == leader_path && delivered_) {
      // The same leader, its data watch not fired: its value and term are what we delivered.
      now = delivered_;
    } else {
      if (data_watch_ != 0)
        connection->remove_watch(data_watch_path_, data_watch_, [](OpResult&&) {});
      data_watch_ = 0;
      data_watch_path_.clear();
      std::uint64_t id = 0;
      OpResult r = SessionCore::call_on(
          *connection,
          [&](ClientConnection& c, Completion done) {
            id = c.get_data(leader_path, on_event(false), std::move(done));
          },
          timeout);
      if (r.rc == Errc::no_node) {  // gone already: the children watch has fired, look again
        wake();
        return Look::kDone;
      }
      if (r.rc != Errc::ok) return Look::kRetryLater;
      data_watch_ = id;
      data_watch_path_ = leader_path;
      first.data = std::move(r.value);  // read after the watch was set: the freshest
      first.czxid = r.stat.czxid;
      first.ephemeral_owner = r.stat.ephemeral_owner;
      now = leader_of(path_, first);
    }
  } else if (data_watch_ != 0) {
    connection->remove_watch(data_watch_path_, data_watch_, [](OpResult&&) {});
    data_watch_ = 0;
    data_watch_path_.clear();
  }
  std::vector<std::string> names;
  names.reserve(queue.size());
  for (const auto& c : queue) names.push_back(c.name);
  if (!delivered_once_ || now != delivered_) {
    LeaderChange change{now, false};
    if (delivered_once_ && now) {
      change.may_have_missed_terms = may_have_missed_terms(
          previous_queue_, delivered_ ? delivered_->node_path.substr(path_.size() + 1) : "", names);
    }
    delivered_once_ = true;
    delivered_ = now;
    deliver(std::move(change));
  }
  previous_queue_ = std::move(names);
  // No children watch (the path does not exist yet): look again later.
  return children_watch_ == 0 ? Look::kRetryLater : Look::kDone;
}

void LeaderWatch::deliver(LeaderChange change) {
  session_->post_event([self = shared_from_this(), change = std::move(change)] {
    if (!self->stopped_.load()) self->on_change_(change);
  });
}

void LeaderWatch::drop_watches() noexcept {
  if (!watched_on_) return;
  if (children_watch_ != 0) watched_on_->remove_watch(path_, children_watch_, [](OpResult&&) {});
  if (data_watch_ != 0) watched_on_->remove_watch(data_watch_path_, data_watch_, [](OpResult&&) {});
  children_watch_ = data_watch_ = 0;
  watched_on_.reset();
}

}  // namespace zklock::detail
