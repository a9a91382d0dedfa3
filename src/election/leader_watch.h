// LeaderWatch: one Election::observe() - who leads an election path, delivered at every change
// (internal).
//
// A thread of its own (an observation is not a waiter: there are few, and its reads are plain
// blocking calls) keeps two watches set - on the path's children and on the leader's node - and
// after each event lists the path again and reads the leader's node when the leader is new or its
// data changed (two reads, whatever the number of participants). A change of leader or of its value
// is posted to the Session's event thread, so that deliveries run one at a time, in the order they
// were seen. The thread waits on the watches and on session changes, and never sleeps on a timer
// except after a failed read (once a second) and while the path does not exist (ZooKeeper sets no
// children watch there).
//
// Locks: mutex_ is a leaf; it is never held while calling the session or the callback.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "session/session_core.h"
#include "zklock/election.h"

namespace zklock::detail {

/// Returns: the Leader a contender of election `path` stands for: its value is the "description"
/// of zklock's node data, or a peer's raw node data.
Leader leader_of(const std::string& path, const Contender& contender);

/// Returns: the participants of election `path` in `names` (a listing), in queue order - the
/// exclusive contenders (zklock's, Curator's and kazoo's lock and latch nodes); read nodes and
/// other names are not participants.
std::vector<Contender> participants(std::vector<std::string> names);

/// Returns: who leads `path` now, with its node's data and stat: one listing and one read of the
/// first participant's node, whatever the number of participants (the first read again if it went
/// between the two). nullopt when nobody leads. Throws: as Session's basic operations.
std::optional<Leader> read_leader(SessionCore& session, const std::string& path,
                                  const std::string& context);

/// Returns: true if a participant that was ahead of the leader now (queue.front()) in the previous
/// look, other than the leader delivered then, is gone: it may have led in between, unseen.
/// (Names in queue order; a participant that is new since then was behind everyone listed.)
bool may_have_missed_terms(const std::vector<std::string>& previous_queue,
                           const std::string& previous_leader,
                           const std::vector<std::string>& queue);

class LeaderWatch final : public SessionObserver, public std::enable_shared_from_this<LeaderWatch> {
 public:
  LeaderWatch(std::shared_ptr<SessionCore> session, std::string path,
              std::function<void(const LeaderChange&)> on_change);
  ~LeaderWatch() override;
  LeaderWatch(const LeaderWatch&) = delete;
  LeaderWatch& operator=(const LeaderWatch&) = delete;

  /// Effects: registers with the session and starts the thread (the first delivery follows).
  void start();
  /// Effects: see LeaderObservation::stop().
  void stop() noexcept;
  bool active() const noexcept { return active_.load(); }

  void on_session_change() override { wake(); }

 private:
  // Outcome of one look at the path.
  enum class Look { kDone, kRetryLater, kWaitForSession };
  void run();
  Look look();
  void wake();
  void watch_fired(bool children, std::uint64_t epoch);
  void deliver(LeaderChange change);
  void drop_watches() noexcept;

  const std::shared_ptr<SessionCore> session_;
  const std::string path_;
  const std::function<void(const LeaderChange&)> on_change_;

  mutable std::mutex mutex_;
  std::condition_variable woken_;
  bool stopping_ = false;
  bool dirty_ = true;            // something may have changed: look again
  bool children_fired_ = false;  // the children watch fired: set it again
  bool data_fired_ = false;      // the leader's data watch fired: set it again
  // Which watch of each kind is the current one: a callback of one replaced (removed while its
  // event was on its way) must not mark the current one as fired.
  std::uint64_t children_epoch_ = 0;
  std::uint64_t data_epoch_ = 0;
  std::atomic<bool> stopped_{false};
  std::atomic<bool> active_{false};
  std::thread thread_;

  // The thread's own (no lock): the watches it set, and what it delivered.
  std::shared_ptr<ClientConnection> watched_on_;
  std::uint64_t children_watch_ = 0;
  std::uint64_t data_watch_ = 0;
  std::string data_watch_path_;
  bool delivered_once_ = false;
  std::optional<Leader> delivered_;
  std::vector<std::string> previous_queue_;  // the names of the last look, in queue order
};

}  // namespace zklock::detail
