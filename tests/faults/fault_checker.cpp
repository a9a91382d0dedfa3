// tests/faults/fault_checker.cpp: see fault_checker.h for the rules.
#include "fault_checker.h"

#include <algorithm>
#include <limits>
#include <map>
#include <sstream>

namespace zklock::testing::faults {
namespace {

constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::max();

std::string ms_text(std::int64_t ns) {
  std::ostringstream os;
  os.setf(std::ios::fixed);
  os.precision(1);
  os << static_cast<double>(ns) / 1e6;
  return os.str();
}

struct Hold {
  std::string holder;
  std::int64_t token = 0;
  std::int64_t acq = 0;
  std::int64_t released = kNever;  // released or gave up
  bool release_said_lost = false;  // gave up because of Lost, or released seeing state Lost
  std::int64_t told_lost = kNever;
  std::int64_t killed = kNever;
  std::int64_t end_by_log = kNever;
  std::int64_t losing_freeze = kNever;
  std::int64_t losing_thaw = kNever;
  std::int64_t natural_end = kNever;
};

struct Attempt {
  std::string holder;
  std::int64_t n = 0;
  std::int64_t token = 0;
  std::int64_t t0 = 0;
  bool late = false;
  int hold = -1;
};

struct Freeze {
  std::int64_t from = 0;
  std::int64_t to = kNever;
};

std::string describe_hold(const Hold& h) {
  std::ostringstream os;
  os << h.holder << "/token " << h.token << " (acquired " << ms_text(h.acq) << " ms";
  if (h.natural_end != kNever) os << ", ended " << ms_text(h.natural_end) << " ms";
  os << ")";
  return os.str();
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Report

bool CheckReport::has(const std::string& rule) const {
  return std::any_of(violations.begin(), violations.end(),
                     [&](const Violation& v) { return v.rule == rule; });
}

std::string CheckReport::describe() const {
  std::ostringstream os;
  os << "holds=" << holds << " (released " << holds_released << ", lost " << holds_lost
     << ", killed " << holds_killed << ", paused out " << holds_paused_out
     << ") accepted=" << accepted << " rejected=" << rejected << " late_writes=" << late_writes
     << " writes_after_resume=" << writes_after_resume
     << " unmatched_attempts=" << unmatched_attempts << " violations=" << violations.size() << "\n";
  for (const auto& v : violations) os << "  VIOLATION " << v.rule << ": " << v.detail << "\n";
  return os.str();
}

void CheckReport::merge(const CheckReport& o) {
  violations.insert(violations.end(), o.violations.begin(), o.violations.end());
  holds += o.holds;
  holds_released += o.holds_released;
  holds_lost += o.holds_lost;
  holds_killed += o.holds_killed;
  holds_paused_out += o.holds_paused_out;
  accepted += o.accepted;
  rejected += o.rejected;
  late_writes += o.late_writes;
  writes_after_resume += o.writes_after_resume;
  unmatched_attempts += o.unmatched_attempts;
  told_lead_ns.insert(told_lead_ns.end(), o.told_lead_ns.begin(), o.told_lead_ns.end());
  takeover_after_kill_ns.insert(takeover_after_kill_ns.end(), o.takeover_after_kill_ns.begin(),
                                o.takeover_after_kill_ns.end());
}

std::string ms_median(std::vector<std::int64_t> ns) {
  if (ns.empty()) return "-";
  std::sort(ns.begin(), ns.end());
  const std::size_t n = ns.size();
  const std::int64_t m = n % 2 == 1 ? ns[n / 2] : (ns[n / 2 - 1] + ns[n / 2]) / 2;
  return ms_text(m);
}

std::string ms_min(const std::vector<std::int64_t>& ns) {
  return ns.empty() ? "-" : ms_text(*std::min_element(ns.begin(), ns.end()));
}

std::string ms_max(const std::vector<std::int64_t>& ns) {
  return ns.empty() ? "-" : ms_text(*std::max_element(ns.begin(), ns.end()));
}

std::string reliability_line(const std::string& scenario, int trials, std::size_t faults,
                             const CheckReport& r, const std::string& extra) {
  std::ostringstream os;
  os << "RELIABILITY suite=faults scenario=" << scenario << " trials=" << trials
     << " faults=" << faults << " holds=" << r.holds << " accepted=" << r.accepted
     << " rejected=" << r.rejected << " violations=" << r.violations.size()
     << " takeover_ms_median=" << ms_median(r.takeover_after_kill_ns)
     << " takeover_ms_worst=" << ms_max(r.takeover_after_kill_ns)
     << " told_lead_ms_median=" << ms_median(r.told_lead_ns)
     << " told_lead_ms_worst=" << ms_min(r.told_lead_ns);
  if (!extra.empty()) os << " " << extra;
  return os.str();
}

// ---------------------------------------------------------------------------------------------
// The checker: one pass per step, in this order, over a timeline built from the logs.

namespace {

using HolderAndWrite = std::pair<std::string, std::int64_t>;

class RunChecker {
 public:
  CheckReport run(const std::vector<StoreRecord>& store, const std::vector<HolderLog>& holders,
                  const std::vector<FaultRecord>& faults) {
    read_faults(faults);
    for (const auto& log : holders) read_holder_log(log);
    close_freezes();
    end_holds();
    check_acquisition_order();
    check_store(store);
    return report_;
  }

 private:
  void violate(const std::string& rule, const std::string& detail) {
    report_.violations.push_back({rule, detail});
  }

  // Kills, freezes and thaws the test injected, per holder.
  void read_faults(const std::vector<FaultRecord>& faults) {
    for (const auto& f : faults) {
      if (f.kind == "kill" && !killed_at_.count(f.target)) killed_at_[f.target] = f.at_ns;
      if (f.kind == "freeze") freezes_[f.target].push_back({f.at_ns, kNever});
      if (f.kind == "thaw") thaws_[f.target].push_back(f.at_ns);
    }
  }

  // Holds and write attempts of one holder, from its log.
  void read_holder_log(const HolderLog& log) {
    int current = -1;  // open hold of this holder
    int last = -1;     // latest hold of this holder (late writes belong to it)
    // In time order: a line is written after its timestamp was taken ("acquired" carries the
    // acquisition time, a write attempt the time before the state check), and callbacks run on
    // another thread, so file order and time order can differ by a little.
    std::vector<LogEvent> events = log.events;
    std::stable_sort(events.begin(), events.end(),
                     [](const LogEvent& a, const LogEvent& b) { return a.at_ns < b.at_ns; });
    for (const auto& e : events) {
      if (e.kind == "acquired") {
        if (current >= 0) {
          violate("hold-never-ended", describe_hold(holds_[current]) +
                                          " was followed by another "
                                          "acquisition of the same holder without ending");
        }
        Hold h;
        h.holder = log.id;
        h.token = e.num("token");
        h.acq = e.at_ns;
        holds_.push_back(h);
        current = last = static_cast<int>(holds_.size()) - 1;
      } else if (e.kind == "lock_state" && current >= 0 &&
                 e.num("token") == holds_[current].token) {
        note_lock_state(holds_[current], e);
      } else if ((e.kind == "released" || e.kind == "gave_up") && current >= 0) {
        Hold& h = holds_[current];
        h.released = e.at_ns;
        h.release_said_lost = e.get("reason") == "lost" || e.get("state") == "Lost";
        current = -1;
      } else if (e.kind == "write_attempt") {
        Attempt a;
        a.holder = log.id;
        a.n = e.num("n");
        a.token = e.num("token");
        a.t0 = e.at_ns;
        a.late = e.get("late") == "1";
        a.hold = a.late ? last : current;
        attempt_index_[{a.holder, a.n}] = attempts_.size();
        attempts_.push_back(a);
      } else if (e.kind == "self_stop") {
        freezes_[log.id].push_back({e.at_ns, kNever});
      }
    }
  }

  // A reported state of hold `h`: the first Lost, and anything held after it.
  void note_lock_state(Hold& h, const LogEvent& e) {
    const std::string s = e.get("state");
    if (s == "Lost") {
      if (h.told_lost == kNever) h.told_lost = e.at_ns;
    } else if (h.told_lost != kNever && (s == "Held" || s == "Suspended")) {
      violate("held-after-lost",
              describe_hold(h) + " reported " + s + " at " + ms_text(e.at_ns) + " ms after Lost");
    }
  }

  // A freeze lasts until the first thaw of that holder after it.
  void close_freezes() {
    for (auto& [holder, list] : freezes_) {
      std::sort(list.begin(), list.end(),
                [](const Freeze& a, const Freeze& b) { return a.from < b.from; });
      for (auto& f : list) {
        for (std::int64_t t : thaws_[holder]) {
          if (t >= f.from) {
            f.to = t;
            break;
          }
        }
      }
    }
  }

  // When each hold ended and how: released, told Lost, killed - or cut short by a losing freeze.
  void end_holds() {
    for (auto& h : holds_) {
      auto k = killed_at_.find(h.holder);
      if (k != killed_at_.end() && k->second >= h.acq && k->second < h.released) {
        h.killed = k->second;
      }
      h.end_by_log = std::min({h.released, h.told_lost, h.killed});
    }
    for (auto& h : holds_) {
      find_losing_freeze(h);
      h.natural_end = std::min(h.end_by_log, h.losing_freeze);
      if (h.end_by_log == kNever) {
        violate("hold-never-ended", describe_hold(h) + ": no release, no Lost, not killed");
      }
      count_end(h);
    }
    report_.holds = holds_.size();
  }

  // Losing: someone else acquired during a freeze of h's holder, or after it but before h noticed
  // - and before its next freeze (a takeover during a later freeze is that freeze's).
  void find_losing_freeze(Hold& h) {
    const auto& list = freezes_[h.holder];
    for (std::size_t fi = 0; fi < list.size(); ++fi) {
      const auto& f = list[fi];
      if (f.from <= h.acq || f.from >= h.end_by_log) continue;
      const std::int64_t window_end =
          fi + 1 < list.size() ? std::min(h.end_by_log, list[fi + 1].from) : h.end_by_log;
      const bool losing = std::any_of(holds_.begin(), holds_.end(), [&](const Hold& o) {
        return &o != &h && o.acq > f.from && o.acq <= window_end;
      });
      if (losing) {
        h.losing_freeze = f.from;
        h.losing_thaw = f.to;
        return;
      }
    }
  }

  void count_end(const Hold& h) {
    if (h.losing_freeze != kNever) {
      ++report_.holds_paused_out;
      if (h.told_lost == kNever && !h.release_said_lost && h.killed == kNever) {
        violate("never-learned-lost", describe_hold(h) + " was paused at " +
                                          ms_text(h.losing_freeze) +
                                          " ms while another holder took over, and never "
                                          "reported Lost");
      }
    } else if (h.end_by_log == h.killed && h.killed != kNever) {
      ++report_.holds_killed;
    } else if (ended_lost(h)) {
      ++report_.holds_lost;  // told by the callback, or saw Lost in state() and gave up
    } else if (h.released != kNever) {
      ++report_.holds_released;
    }
  }

  static bool ended_lost(const Hold& h) {
    return (h.told_lost != kNever && h.told_lost == h.end_by_log) ||
           (h.released != kNever && h.released == h.end_by_log && h.release_said_lost);
  }

  // Holds in acquisition order: exclusion, token growth, and the takeover figures.
  void check_acquisition_order() {
    order_.resize(holds_.size());
    for (std::size_t i = 0; i < order_.size(); ++i) order_[i] = i;
    std::sort(order_.begin(), order_.end(),
              [&](std::size_t a, std::size_t b) { return holds_[a].acq < holds_[b].acq; });
    for (std::size_t i = 0; i < order_.size(); ++i) {
      const Hold& a = holds_[order_[i]];
      if (i + 1 < order_.size() && holds_[order_[i + 1]].token <= a.token) {
        violate("token-not-increasing", describe_hold(holds_[order_[i + 1]]) + " acquired after " +
                                            describe_hold(a) + " with a token that is not larger");
      }
      for (std::size_t j = i + 1; j < order_.size() && holds_[order_[j]].acq < a.natural_end; ++j) {
        const Hold& b = holds_[order_[j]];
        const std::string why = a.told_lost == kNever ? "it was never told it lost"
                                : a.told_lost > b.acq
                                    ? "it was told Lost only at " + ms_text(a.told_lost) + " ms"
                                    : "it had not ended";
        violate("two-holders", describe_hold(b) + " acquired at " + ms_text(b.acq) + " ms while " +
                                   describe_hold(a) + " still held: " + why);
      }
      if (i + 1 < order_.size()) add_takeover_figures(a, holds_[order_[i + 1]]);
    }
  }

  // The next hold after one that ended by Lost (or by a kill): how long after.
  void add_takeover_figures(const Hold& a, const Hold& next) {
    if (a.losing_freeze != kNever || a.end_by_log == kNever) return;
    if (ended_lost(a)) report_.told_lead_ns.push_back(next.acq - a.end_by_log);
    if (a.killed != kNever && a.killed == a.end_by_log) {
      report_.takeover_after_kill_ns.push_back(next.acq - a.killed);
    }
  }

  // Largest token among holds acquired before `t`.
  std::int64_t newest_hold_token_before(std::int64_t t) const {
    std::int64_t newest = std::numeric_limits<std::int64_t>::min();
    for (std::size_t i : order_) {
      if (holds_[i].acq >= t) break;
      newest = std::max(newest, holds_[i].token);
    }
    return newest;
  }

  // The store, in the order it decided: token order, and each write against its hold.
  void check_store(const std::vector<StoreRecord>& store) {
    std::int64_t newest_accepted = std::numeric_limits<std::int64_t>::min();
    std::vector<bool> matched(attempts_.size(), false);
    for (const auto& r : store) {
      if (r.accepted) {
        ++report_.accepted;
        if (r.token < newest_accepted) {
          violate("token-order", "write " + r.writer + "#" + std::to_string(r.write_no) +
                                     " with token " + std::to_string(r.token) + " accepted at " +
                                     ms_text(r.at_ns) + " ms after token " +
                                     std::to_string(newest_accepted));
        }
        newest_accepted = std::max(newest_accepted, r.token);
      } else {
        ++report_.rejected;
      }
      auto it = attempt_index_.find({r.writer, r.write_no});
      if (it == attempt_index_.end()) {
        violate("unlogged-write", format_record(r) + ": its writer never logged the attempt");
        continue;
      }
      matched[it->second] = true;
      check_write(r, attempts_[it->second]);
    }
    report_.unmatched_attempts =
        static_cast<std::size_t>(std::count(matched.begin(), matched.end(), false));
  }

  // One write the store decided, against the attempt its holder logged.
  void check_write(const StoreRecord& r, const Attempt& a) {
    const std::string what = "write " + r.writer + "#" + std::to_string(r.write_no) + " (token " +
                             std::to_string(r.token) + ", attempted " + ms_text(a.t0) +
                             " ms, decided " + ms_text(r.at_ns) + " ms, " +
                             (r.accepted ? "accepted" : "rejected") + ")";
    if (a.late) {
      ++report_.late_writes;
      if (r.accepted) violate("late-write-accepted", what);
      return;
    }
    if (a.hold < 0) {
      if (r.accepted) violate("write-after-end", what + " outside any hold");
      return;
    }
    const Hold& h = holds_[a.hold];
    if (h.losing_freeze != kNever && r.at_ns > h.losing_freeze) {
      ++report_.writes_after_resume;
      if (r.accepted) {
        violate("paused-write-accepted", what + " of " + describe_hold(h) + ", paused at " +
                                             ms_text(h.losing_freeze) + " ms");
      }
      return;
    }
    if (r.accepted && a.t0 > h.natural_end) {
      violate("write-after-end", what + " after the end of " + describe_hold(h));
    }
    if (!r.accepted && r.at_ns < h.natural_end) {
      violate("refused-while-holding", what + " during " + describe_hold(h) +
                                           ": the store had token " + std::to_string(r.newest));
    }
    const std::int64_t newest_hold = newest_hold_token_before(r.at_ns);
    if (r.accepted && newest_hold > r.token) {
      violate(
          "stale-write-after-takeover",
          what + ": a holder with token " + std::to_string(newest_hold) + " had already acquired");
    }
  }

  CheckReport report_;
  std::map<std::string, std::int64_t> killed_at_;
  std::map<std::string, std::vector<Freeze>> freezes_;
  std::map<std::string, std::vector<std::int64_t>> thaws_;
  std::vector<Hold> holds_;
  std::vector<std::size_t> order_;  // indexes into holds_, by acquisition time
  std::vector<Attempt> attempts_;
  std::map<HolderAndWrite, std::size_t> attempt_index_;
};

}  // namespace

CheckReport check_run(const std::vector<StoreRecord>& store, const std::vector<HolderLog>& holders,
                      const std::vector<FaultRecord>& faults) {
  return RunChecker().run(store, holders, faults);
}

}  // namespace zklock::testing::faults
