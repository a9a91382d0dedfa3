// Waiters of one MutexCore sharing what they learn of the queue (QueueView, queue_view.h): one
// listing serves every attempt that needs one at the time, and a waiter whose predecessor goes
// finds the next one in the view instead of listing the whole queue again. With n waiters of one
// core a release costs O(log n) here, not a listing of n names. Only for a Mutex without a
// lock-delay (walks_queue()). Every MutexCore function here runs with mutex_ held, except the
// completion on_shared_listing(), which takes it.
//
// Why a waiter may share a listing: the server answers one session's requests in order, and the
// C client hands their answers to one thread in that order. A listing whose answer has not come
// yet was therefore sent after every request whose answer has - so after the create of any
// attempt whose create was answered: it shows that attempt's node and everyone ahead of it.
#include <algorithm>
#include <utility>

#include "lock/lock_node_name.h"
#include "lock/mutex_attempt.h"
#include "lock/mutex_core.h"

namespace zklock::detail {

struct MutexCore::SharedListing {
  unsigned generation = 0;
  std::vector<std::pair<AttemptPtr, unsigned>> waiting;  // the attempts and the steps they list at
};

void MutexCore::join_or_send_listing_locked(const AttemptPtr& a, unsigned step,
                                            ClientConnection& c) {
  if (listing_in_flight_ && listing_in_flight_->generation == a->generation &&
      !a->node_path.empty() && !a->create_in_flight) {
    listing_in_flight_->waiting.emplace_back(a, step);
    return;
  }
  send_shared_listing_locked(a, step, c);
}

void MutexCore::send_shared_listing_locked(const AttemptPtr& a, unsigned step,
                                           ClientConnection& c) {
  auto listing = std::make_shared<SharedListing>();
  listing->generation = a->generation;
  listing->waiting.emplace_back(a, step);
  listing_in_flight_ = listing;
  auto self = shared_from_this();
  c.get_children(path_,
                 [self, listing](OpResult&& r) { self->on_shared_listing(listing, std::move(r)); });
}

void MutexCore::on_shared_listing(const std::shared_ptr<SharedListing>& listing, OpResult&& r) {
  std::lock_guard lock(mutex_);
  if (listing_in_flight_ == listing) listing_in_flight_.reset();
  std::vector<AttemptPtr> ready;
  for (const auto& [a, step] : listing->waiting) {
    if (a->step == step && a->phase == Attempt::Phase::kListing) ready.push_back(a);
  }
  if (ready.empty()) return;
  auto self = shared_from_this();
  // Each attempt is moved on in turn; one's step may change another's (a holder prepares the
  // waiter behind it), so each is looked at again before it is.
  const auto still_listing = [](const AttemptPtr& a) {
    return a->phase == Attempt::Phase::kListing;
  };
  if (r.rc != Errc::ok) {
    for (const auto& a : ready) {
      if (!still_listing(a)) continue;
      if (r.rc == Errc::no_node) {  // the lock path itself is gone, and our nodes with it
        vanished_locked(a);
      } else if (!step_failed_locked(a, r.rc, [self, a] { self->list_locked(a); })) {
        fail_locked(a, r.rc);
      }
    }
    return;
  }
  // Parsed once, for everyone.
  std::vector<ListedContender> queue = parse_listing(std::move(r.children));
  if (std::any_of(queue.begin(), queue.end(), [](const ListedContender& c) {
        return c.parsed.kind != ContenderKind::kExclusive;
      })) {
    // Another library's read/write lock lives here (on_listed says why this is refused).
    for (const auto& a : ready) {
      if (still_listing(a)) fail_locked(a, Errc::incompatible_lock);
    }
    return;
  }
  if (!orphans_.empty()) {  // our own undeletable nodes are in nobody's way (on_listed)
    queue.erase(
        std::remove_if(queue.begin(), queue.end(),
                       [&](const ListedContender& c) { return orphans_.count(c.name) != 0; }),
        queue.end());
  }
  if (!sequence_order_reliable(queue)) {
    for (const auto& a : ready) {
      if (still_listing(a)) order_by_czxid_locked(a, queue);  // a czxid read each, as on_listed
    }
    return;
  }
  sort_by_sequence(queue);
  // The view learns from the listing only when someone of ours will wait: an acquisition that is
  // first at once costs nothing more.
  const bool someone_waits = std::any_of(ready.begin(), ready.end(), [&](const AttemptPtr& a) {
    const auto it = find_in_sorted(queue, a->sequence, a->node_name);
    return it != queue.end() && it != queue.begin();
  });
  if (someone_waits) {
    view_.use_generation(listing->generation);
    view_.merge(queue);
  }
  for (const auto& a : ready) {
    if (still_listing(a)) evaluate_locked(a, queue, /*by_sequence=*/true);
  }
}

void MutexCore::walk_on_locked(const AttemptPtr& a) {
  if (!a->walks_view || view_.generation() != a->generation) {
    a->walks_view = false;
    list_locked(a);
    return;
  }
  bool first = false;
  const auto next = view_.nearest_below(a->sequence, first);
  if (!next) {
    first_in_line_locked(a);
    return;
  }
  if (!first && !view_.owned(next->parsed.sequence)) {
    // Another session's node, behind others: it may have gone unseen, and so may those below it
    // - a walk would spend a round trip on each. A listing forgets them all in one.
    list_locked(a);
    return;
  }
  a->pred_path = path_ + "/" + next->name;
  a->pred_sequence = next->parsed.sequence;
  // Every node that exists below our sequence is in the view: with none below `next`, nothing
  // will be ahead of us once it goes.
  a->pred_was_first = first;
  if (options_.on_queue_position) {
    const std::size_t ahead = view_.count_below(a->sequence);
    if (ahead != a->reported_ahead) {
      a->reported_ahead = ahead;
      post_callback_locked([callback = options_.on_queue_position, ahead] { callback(ahead); });
    }
  }
  watch_locked(a);
}

void MutexCore::first_in_line_locked(const AttemptPtr& a) {
  auto c = connection_for_locked(a);
  if (!c) {
    a->phase = Attempt::Phase::kAwaitGeneration;
    return;
  }
  if (a->self_deleted) {
    vanished_locked(a);
    return;
  }
  // Nothing is ahead of our node - if it is still there. A watch on it set on this very
  // connection says so (it would have told its deletion); otherwise one read of it does.
  if (a->self_watch != 0 && a->self_watch_epoch != 0 && a->self_watch_epoch == c->epoch()) {
    acquired_locked(a);
    return;
  }
  a->phase = Attempt::Phase::kWatching;
  a->pred_watch = 0;
  a->pred_was_first = true;
  a->awaiting_self_read = true;
  const unsigned step = ++a->step;
  const std::uint64_t epoch = c->epoch();
  auto self = shared_from_this();
  const bool set_watch = a->self_watch == 0;  // else an older connection's is still registered
  auto answered = [self, a, step, epoch, set_watch](OpResult&& r) {
    std::lock_guard lock(self->mutex_);
    if (set_watch) {
      if (r.rc == Errc::ok) {
        a->self_watch_epoch = epoch;
        self->own_data_read_locked(a, r.value, r.stat.version);
      } else {
        a->self_watch = 0;
      }
    }
    if (a->step != step || a->phase != Attempt::Phase::kWatching) return;
    a->awaiting_self_read = false;
    if (r.rc == Errc::ok) {
      self->acquired_locked(a);
    } else if (r.rc == Errc::no_node) {
      self->vanished_locked(a);
    } else if (!self->step_failed_locked(a, r.rc, [self, a] { self->first_in_line_locked(a); })) {
      self->fail_locked(a, r.rc);
    }
  };
  if (set_watch) {
    a->self_watch = c->get_data(
        a->node_path, [self, a](WatchEventType t) { self->on_self_event(a, t); },
        std::move(answered));
  } else {
    c->exists(a->node_path, std::move(answered));
  }
}

void MutexCore::prepare_successor_locked(const AttemptPtr& a) {
  if (view_.generation() != a->generation) return;
  const auto owner = view_.owner_above(a->sequence);
  if (!owner) return;
  const auto w = std::static_pointer_cast<Attempt>(owner);
  if (w->phase != Attempt::Phase::kWatching || w->pred_path != a->node_path || w->pred_was_first ||
      w->pred_watch == 0) {
    return;
  }
  auto c = connection_for_locked(w);
  if (!c) return;
  // We hold, so nothing is ahead of us: when our node goes, the one behind it is first. With a
  // watch on its own node set now - while we hold - it holds on our deletion's event alone
  // (on_pred_event's fast path), as a waiter second in line does.
  w->pred_was_first = true;
  if (w->self_watch != 0) return;
  const unsigned step = w->step;
  const std::uint64_t epoch = c->epoch();
  w->awaiting_self_read = true;
  auto self = shared_from_this();
  w->self_watch = c->get_data(
      w->node_path, [self, w](WatchEventType t) { self->on_self_event(w, t); },
      [self, w, step, epoch](OpResult&& r) { self->on_self_read(w, step, epoch, std::move(r)); });
}

}  // namespace zklock::detail
