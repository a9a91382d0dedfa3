// tests/faults/fault_checker.cpp: see fault_checker.h for the rules.
#include "fault_checker.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <limits>
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

bool parse_i64(const std::string& text, std::int64_t& out) {
  if (text.empty()) return false;
  std::size_t i = text[0] == '-' ? 1 : 0;
  if (i == text.size()) return false;
  std::int64_t v = 0;
  for (; i < text.size(); ++i) {
    if (text[i] < '0' || text[i] > '9') return false;
    v = v * 10 + (text[i] - '0');
  }
  out = text[0] == '-' ? -v : v;
  return true;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream os;
  os << in.rdbuf();
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
// Parsing

std::string LogEvent::get(const std::string& key) const {
  auto it = fields.find(key);
  return it == fields.end() ? std::string() : it->second;
}

std::int64_t LogEvent::num(const std::string& key, std::int64_t fallback) const {
  std::int64_t v = 0;
  return parse_i64(get(key), v) ? v : fallback;
}

std::vector<LogEvent> HolderLog::of(const std::string& kind) const {
  std::vector<LogEvent> out;
  for (const auto& e : events) {
    if (e.kind == kind) out.push_back(e);
  }
  return out;
}

std::size_t HolderLog::acquisitions() const { return of("acquired").size(); }

std::vector<LogEvent> parse_log(const std::string& text) {
  std::vector<LogEvent> out;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (lines.eof() && !text.empty() && text.back() != '\n') break;  // a half-written last line
    std::istringstream words(line);
    std::string at_text;
    LogEvent e;
    if (!(words >> at_text >> e.kind) || !parse_i64(at_text, e.at_ns)) continue;
    for (std::string w; words >> w;) {
      const auto eq = w.find('=');
      if (eq == std::string::npos) continue;
      e.fields[w.substr(0, eq)] = w.substr(eq + 1);
    }
    out.push_back(std::move(e));
  }
  return out;
}

HolderLog read_holder_log(const std::string& path) {
  HolderLog log;
  log.path = path;
  log.events = parse_log(read_file(path));
  for (const auto& e : log.events) {
    if (e.kind == "start") {
      log.id = e.get("id");
      break;
    }
  }
  if (log.id.empty()) log.id = path.substr(path.rfind('/') + 1);
  return log;
}

std::vector<StoreRecord> read_store_log(const std::string& path) {
  std::vector<StoreRecord> out;
  std::istringstream lines(read_file(path));
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    StoreRecord r;
    bool ok = true;
    int seen = 0;
    for (std::string w; words >> w;) {
      const auto eq = w.find('=');
      if (eq == std::string::npos) continue;
      const std::string k = w.substr(0, eq), v = w.substr(eq + 1);
      ++seen;
      if (k == "t") ok &= parse_i64(v, r.at_ns);
      else if (k == "writer") r.writer = v;
      else if (k == "token") ok &= parse_i64(v, r.token);
      else if (k == "n") ok &= parse_i64(v, r.write_no);
      else if (k == "result") r.accepted = v == "accepted";
      else if (k == "newest") ok &= parse_i64(v, r.newest);
    }
    if (ok && seen == 6) out.push_back(r);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// FaultLog

FaultLog::FaultLog(std::string path) : path_(std::move(path)) {}

void FaultLog::record(const std::string& kind, const std::string& target, const std::string& detail) {
  FaultRecord r{monotonic_ns(), kind, target, detail};
  std::lock_guard lock(mutex_);
  records_.push_back(r);
  if (!path_.empty()) {
    std::ofstream out(path_, std::ios::app);
    out << r.at_ns << " " << kind << " target=" << (target.empty() ? "-" : target)
        << " detail=" << (detail.empty() ? "-" : detail) << "\n";
  }
}

std::vector<FaultRecord> FaultLog::records() const {
  std::lock_guard lock(mutex_);
  return records_;
}

std::size_t FaultLog::injected() const {
  std::lock_guard lock(mutex_);
  std::size_t n = 0;
  for (const auto& r : records_) {
    if (r.kind == "thaw" || r.kind == "heal" || r.kind.rfind("end-", 0) == 0 ||
        r.kind.rfind("restart", 0) == 0) {
      continue;
    }
    ++n;
  }
  return n;
}

// ---------------------------------------------------------------------------------------------
// Report

bool CheckReport::has(const std::string& rule) const {
  return std::any_of(violations.begin(), violations.end(),
                     [&](const Violation& v) { return v.rule == rule; });
}

std::string CheckReport::describe() const {
  std::ostringstream os;
  os << "holds=" << holds << " (released " << holds_released << ", lost " << holds_lost
     << ", killed " << holds_killed << ", paused out " << holds_paused_out << ") accepted=" << accepted
     << " rejected=" << rejected << " late_writes=" << late_writes
     << " writes_after_resume=" << writes_after_resume << " unmatched_attempts=" << unmatched_attempts
     << " violations=" << violations.size() << "\n";
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
// The checker

CheckReport check_run(const std::vector<StoreRecord>& store, const std::vector<HolderLog>& holders,
                      const std::vector<FaultRecord>& faults) {
  CheckReport report;
  auto violate = [&](const std::string& rule, const std::string& detail) {
    report.violations.push_back({rule, detail});
  };

  // ---- Faults per holder.
  std::map<std::string, std::int64_t> killed_at;
  std::map<std::string, std::vector<Freeze>> freezes;
  std::map<std::string, std::vector<std::int64_t>> thaws;
  for (const auto& f : faults) {
    if (f.kind == "kill" && !killed_at.count(f.target)) killed_at[f.target] = f.at_ns;
    if (f.kind == "freeze") freezes[f.target].push_back({f.at_ns, kNever});
    if (f.kind == "thaw") thaws[f.target].push_back(f.at_ns);
  }

  // ---- Holds and write attempts from the holders' logs.
  std::vector<Hold> holds;
  std::vector<Attempt> attempts;
  std::map<std::pair<std::string, std::int64_t>, std::size_t> attempt_index;
  for (const auto& log : holders) {
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
          violate("hold-never-ended", describe_hold(holds[current]) + " was followed by another "
                                      "acquisition of the same holder without ending");
        }
        Hold h;
        h.holder = log.id;
        h.token = e.num("token");
        h.acq = e.at_ns;
        holds.push_back(h);
        current = last = static_cast<int>(holds.size()) - 1;
      } else if (e.kind == "lock_state" && current >= 0 && e.num("token") == holds[current].token) {
        Hold& h = holds[current];
        const std::string s = e.get("state");
        if (s == "Lost") {
          if (h.told_lost == kNever) h.told_lost = e.at_ns;
        } else if (h.told_lost != kNever && (s == "Held" || s == "Suspended")) {
          violate("held-after-lost", describe_hold(h) + " reported " + s + " at " +
                                         ms_text(e.at_ns) + " ms after Lost");
        }
      } else if ((e.kind == "released" || e.kind == "gave_up") && current >= 0) {
        Hold& h = holds[current];
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
        attempt_index[{a.holder, a.n}] = attempts.size();
        attempts.push_back(a);
      } else if (e.kind == "self_stop") {
        freezes[log.id].push_back({e.at_ns, kNever});
      }
    }
  }
  // A freeze lasts until the first thaw of that holder after it.
  for (auto& [holder, list] : freezes) {
    std::sort(list.begin(), list.end(), [](const Freeze& a, const Freeze& b) { return a.from < b.from; });
    for (auto& f : list) {
      for (std::int64_t t : thaws[holder]) {
        if (t >= f.from) {
          f.to = t;
          break;
        }
      }
    }
  }

  // ---- Ends of holds.
  for (auto& h : holds) {
    auto k = killed_at.find(h.holder);
    if (k != killed_at.end() && k->second >= h.acq && k->second < h.released) h.killed = k->second;
    h.end_by_log = std::min({h.released, h.told_lost, h.killed});
  }
  for (auto& h : holds) {
    const auto& list = freezes[h.holder];
    for (std::size_t fi = 0; fi < list.size(); ++fi) {
      const auto& f = list[fi];
      if (f.from <= h.acq || f.from >= h.end_by_log) continue;
      // Losing: someone else acquired during this freeze, or after it but before this holder
      // noticed - and before its next freeze (a takeover during a later freeze is that freeze's).
      const std::int64_t window_end =
          fi + 1 < list.size() ? std::min(h.end_by_log, list[fi + 1].from) : h.end_by_log;
      const bool losing = std::any_of(holds.begin(), holds.end(), [&](const Hold& o) {
        return &o != &h && o.acq > f.from && o.acq <= window_end;
      });
      if (losing) {
        h.losing_freeze = f.from;
        h.losing_thaw = f.to;
        break;
      }
    }
    h.natural_end = std::min(h.end_by_log, h.losing_freeze);
    if (h.end_by_log == kNever) {
      violate("hold-never-ended", describe_hold(h) + ": no release, no Lost, not killed");
    }
    if (h.losing_freeze != kNever) {
      ++report.holds_paused_out;
      if (h.told_lost == kNever && !h.release_said_lost && h.killed == kNever) {
        violate("never-learned-lost", describe_hold(h) + " was paused at " + ms_text(h.losing_freeze) +
                                          " ms while another holder took over, and never reported Lost");
      }
    } else if (h.end_by_log == h.killed && h.killed != kNever) {
      ++report.holds_killed;
    } else if ((h.end_by_log == h.told_lost && h.told_lost != kNever) ||
               (h.end_by_log == h.released && h.release_said_lost)) {
      ++report.holds_lost;  // told by the callback, or saw Lost in state() and gave up
    } else if (h.released != kNever) {
      ++report.holds_released;
    }
  }
  report.holds = holds.size();

  // ---- Holds in acquisition order: exclusion and token growth.
  std::vector<std::size_t> order(holds.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return holds[a].acq < holds[b].acq; });
  for (std::size_t i = 0; i < order.size(); ++i) {
    const Hold& a = holds[order[i]];
    if (i + 1 < order.size() && holds[order[i + 1]].token <= a.token) {
      violate("token-not-increasing", describe_hold(holds[order[i + 1]]) + " acquired after " +
                                          describe_hold(a) + " with a token that is not larger");
    }
    for (std::size_t j = i + 1; j < order.size() && holds[order[j]].acq < a.natural_end; ++j) {
      const Hold& b = holds[order[j]];
      std::string why = a.told_lost == kNever ? "it was never told it lost"
                        : a.told_lost > b.acq ? "it was told Lost only at " + ms_text(a.told_lost) + " ms"
                                              : "it had not ended";
      violate("two-holders", describe_hold(b) + " acquired at " + ms_text(b.acq) + " ms while " +
                                 describe_hold(a) + " still held: " + why);
    }
    // Figures: the next hold after one that ended by Lost (or by a kill).
    if (i + 1 < order.size()) {
      const Hold& next = holds[order[i + 1]];
      const bool ended_lost = (a.told_lost != kNever && a.told_lost == a.end_by_log) ||
                              (a.released == a.end_by_log && a.release_said_lost);
      if (a.losing_freeze == kNever && a.end_by_log != kNever && ended_lost) {
        report.told_lead_ns.push_back(next.acq - a.end_by_log);
      }
      if (a.losing_freeze == kNever && a.killed != kNever && a.killed == a.end_by_log) {
        report.takeover_after_kill_ns.push_back(next.acq - a.killed);
      }
    }
  }

  // ---- The store: token order, and each write against its hold.
  std::int64_t newest_accepted = std::numeric_limits<std::int64_t>::min();
  std::vector<bool> matched(attempts.size(), false);
  // Largest token among holds acquired up to a time: holds sorted by acq with a running max.
  std::vector<std::pair<std::int64_t, std::int64_t>> max_token_by_acq;  // (acq, max token so far)
  for (std::size_t i : order) {
    const std::int64_t prev = max_token_by_acq.empty() ? std::numeric_limits<std::int64_t>::min()
                                                       : max_token_by_acq.back().second;
    max_token_by_acq.push_back({holds[i].acq, std::max(prev, holds[i].token)});
  }
  auto newest_hold_token_before = [&](std::int64_t t) {
    auto it = std::lower_bound(max_token_by_acq.begin(), max_token_by_acq.end(), t,
                               [](const auto& p, std::int64_t v) { return p.first < v; });
    if (it == max_token_by_acq.begin()) return std::numeric_limits<std::int64_t>::min();
    return std::prev(it)->second;
  };
  for (const auto& r : store) {
    if (r.accepted) {
      ++report.accepted;
      if (r.token < newest_accepted) {
        violate("token-order", "write " + r.writer + "#" + std::to_string(r.write_no) + " with token " +
                                   std::to_string(r.token) + " accepted at " + ms_text(r.at_ns) +
                                   " ms after token " + std::to_string(newest_accepted));
      }
      newest_accepted = std::max(newest_accepted, r.token);
    } else {
      ++report.rejected;
    }
    auto it = attempt_index.find({r.writer, r.write_no});
    if (it == attempt_index.end()) {
      violate("unlogged-write", format_record(r) + ": its writer never logged the attempt");
      continue;
    }
    matched[it->second] = true;
    const Attempt& a = attempts[it->second];
    const std::string what = "write " + r.writer + "#" + std::to_string(r.write_no) + " (token " +
                             std::to_string(r.token) + ", attempted " + ms_text(a.t0) + " ms, decided " +
                             ms_text(r.at_ns) + " ms, " + (r.accepted ? "accepted" : "rejected") + ")";
    if (a.late) {
      ++report.late_writes;
      if (r.accepted) violate("late-write-accepted", what);
      continue;
    }
    if (a.hold < 0) {
      if (r.accepted) violate("write-after-end", what + " outside any hold");
      continue;
    }
    const Hold& h = holds[a.hold];
    if (h.losing_freeze != kNever && r.at_ns > h.losing_freeze) {
      ++report.writes_after_resume;
      if (r.accepted) {
        violate("paused-write-accepted", what + " of " + describe_hold(h) + ", paused at " +
                                             ms_text(h.losing_freeze) + " ms");
      }
      continue;
    }
    if (r.accepted && a.t0 > h.natural_end) {
      violate("write-after-end", what + " after the end of " + describe_hold(h));
    }
    if (!r.accepted && r.at_ns < h.natural_end) {
      violate("refused-while-holding", what + " during " + describe_hold(h) + ": the store had token " +
                                           std::to_string(r.newest));
    }
    if (r.accepted && newest_hold_token_before(r.at_ns) > r.token) {
      violate("stale-write-after-takeover", what + ": a holder with token " +
                                                std::to_string(newest_hold_token_before(r.at_ns)) +
                                                " had already acquired");
    }
  }
  for (std::size_t i = 0; i < attempts.size(); ++i) {
    if (!matched[i]) ++report.unmatched_attempts;
  }
  return report;
}

}  // namespace zklock::testing::faults
