// tests/netfaults/cut_trial.cpp
#include "cut_trial.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <random>
#include <thread>
#include <tuple>

#include "fault_checker.h"
#include "fault_env.h"
#include "fenced_store.h"
#include "support/process.h"
#include "support/wait.h"
#include "test_env.h"
#include "zklock/errors.h"

namespace zklock::testing::netfaults {
namespace {

using namespace std::chrono_literals;
using faults::FaultLog;
using faults::FencedStore;
using std::chrono::milliseconds;

struct Pair {
  CutPairPlan plan;
  std::string name;
  std::string path;  // as the clients name it
  std::unique_ptr<FencedStore> store;
  std::unique_ptr<Contender> holder;
  std::unique_ptr<Contender> waiter;
};

std::string describe(const CutPairResult& r) {
  std::string text = "trial " + std::to_string(r.trial) + ", " + to_string(r.config) + ", " +
                     to_string(r.kind) + ", T=" + std::to_string(r.session.count()) + " ms: ";
  const auto& o = r.outcome;
  text += o.told_ns == 0 ? "holder never told Lost"
                         : "holder told Lost " + ms(o.told_ns - r.cut_ns) + " ms after the cut";
  if (o.fenced_ns != 0) {
    text += " (fenced out by the store " + ms(o.fenced_ns - r.cut_ns) + " ms after the cut)";
  }
  text += o.taken_ns == 0 ? ", waiter never acquired"
                          : ", waiter acquired " + ms(o.taken_ns - r.cut_ns) + " ms after the cut";
  if (o.told_ns != 0 && o.taken_ns != 0) {
    text += o.told_ns < o.taken_ns ? " (told " + ms(o.taken_ns - o.told_ns) + " ms before)"
                                   : " (told " + ms(o.told_ns - o.taken_ns) + " ms AFTER)";
  }
  for (const auto& [mark, at] : r.marks) text += ", " + mark + " " + ms(at - r.cut_ns) + " ms";
  return text;
}

// The queue on `path` as `monitor` reads it now, each node with the session that owns it: a trial
// that could not run shows who was in the way.
std::string describe_queue(Session& monitor, const std::string& path) {
  std::string out = "--- the queue on " + path + " now:";
  try {
    const std::vector<std::string> nodes = lock_children(monitor, path);
    if (nodes.empty()) out += " empty";
    for (const std::string& node : nodes) {
      const auto data = monitor.get(path + "/" + node);
      out += "\n  " + node + " owner " +
             (data ? session_id_hex(data->stat.ephemeral_owner) : std::string("(gone)"));
    }
  } catch (const Error& e) {
    out += std::string(" unreadable: ") + e.what();
  }
  return out + "\n";
}

// The session that reads the queue of `plan`'s lock: its own monitor, else the trial's.
Session& monitor_for(const CutPairPlan& plan, const CutContext& context) {
  return plan.monitor != nullptr ? *plan.monitor : context.monitor;
}

}  // namespace

void ensure_chroot(Session& monitor) {
  if (monitor.get(kChroot)) return;
  try {
    monitor.create(kChroot);
  } catch (const Error& e) {
    if (e.errc() != Errc::node_exists) throw;
  }
}

std::vector<CutPairResult> run_cut_trial(const CutContext& context,
                                         const std::vector<CutPairPlan>& plans, int trial,
                                         unsigned seed, const CutActions& actions) {
  const std::string prefix = "t" + std::to_string(trial);
  FaultLog faults(context.dir + "/" + prefix + ".faults");
  std::vector<Pair> pairs;
  std::vector<CutPairResult> results;
  for (const CutPairPlan& plan : plans) {
    Pair p;
    p.plan = plan;
    p.name = prefix + "-" + to_string(plan.config) + "-" + to_string(plan.kind) + "-" +
             std::to_string(plan.session.count() / 1000) + "s";
    p.path = unique_path(context.scenario + "-" + p.name);
    p.store = FencedStore::start(context.dir + "/" + p.name + ".sock",
                                 context.dir + "/" + p.name + ".store");
    p.holder = std::make_unique<Contender>(
        plan.kind, plan.holder_ns,
        ContenderSpec{p.name + "-holder", context.dir, plan.holder.connect, p.path, plan.session,
                      p.store->socket_path(), plan.holder.tls});
    CutPairResult r;
    r.trial = trial;
    r.config = plan.config;
    r.kind = plan.kind;
    r.session = plan.session;
    results.push_back(r);
    pairs.push_back(std::move(p));
  }
  auto fail_all = [&](const std::string& why) {
    for (std::size_t i = 0; i < pairs.size(); ++i) {
      results[i].error = why;
      results[i].evidence = describe_queue(monitor_for(pairs[i].plan, context),
                                           pairs[i].plan.holder.server_path(pairs[i].path));
      results[i].evidence += pairs[i].holder->evidence();
      if (pairs[i].waiter) results[i].evidence += "\n" + pairs[i].waiter->evidence();
    }
    return results;
  };
  if (!wait_until(
          [&] {
            return std::all_of(pairs.begin(), pairs.end(),
                               [](const Pair& p) { return p.holder->acquired_ns() != 0; });
          },
          30s)) {
    return fail_all("a holder did not acquire within 30 s of its start");
  }
  for (auto& p : pairs) {
    p.waiter = std::make_unique<Contender>(
        waiter_for(p.plan.kind), p.plan.waiter_ns,
        ContenderSpec{p.name + "-waiter", context.dir, p.plan.waiter.connect, p.path,
                      p.plan.session, p.store->socket_path(), p.plan.waiter.tls});
  }
  if (!wait_until(
          [&] {
            return std::all_of(pairs.begin(), pairs.end(), [&](const Pair& p) {
              return lock_children(monitor_for(p.plan, context), p.plan.holder.server_path(p.path))
                         .size() == 2;
            });
          },
          30s)) {
    return fail_all("a waiter did not queue within 30 s of its start");
  }

  // The cut starts at a random point of the holders' heartbeat cycles.
  std::this_thread::sleep_for(milliseconds(std::mt19937(seed)() % 1000));
  faults.record("cut", context.scenario);
  actions.cut();
  const std::int64_t cut_ns = faults::monotonic_ns();  // the cut is complete

  // Settled: every waiter acquired, and every holder was told or is gone. A holder that is never
  // told shows up below as "never told", not as a hang.
  TrialMarks marks;
  wait_until(
      [&] {
        if (actions.watch) actions.watch(marks);
        return std::all_of(pairs.begin(), pairs.end(), [](Pair& p) {
          return p.waiter->acquired_ns() != 0 &&
                 (p.holder->told_lost_ns() != 0 || !p.holder->process().running());
        });
      },
      context.settle_timeout, 100ms);

  actions.heal();
  faults.record("heal", context.scenario);
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    Pair& p = pairs[i];
    results[i].cut_ns = cut_ns;
    results[i].marks = marks;
    results[i].outcome = judge_pair(*p.holder, *p.waiter, *p.store, faults, 20s);
    if (p.plan.holder.tls && !p.holder->encrypted()) results[i].unencrypted += " the holder";
    if (p.plan.waiter.tls && !p.waiter->encrypted()) results[i].unencrypted += " the waiter";
    results[i].evidence = p.holder->evidence() + "\n" + p.waiter->evidence();
  }
  return results;
}

void report_and_check(const std::string& scenario, const std::vector<CutPairResult>& results,
                      const std::string& where) {
  // One line per (config, client, T), in the order the results first name them.
  std::vector<std::tuple<ClientConfig, ContenderKind, milliseconds>> cells;
  for (const auto& r : results) {
    const auto cell = std::make_tuple(r.config, r.kind, r.session);
    if (std::find(cells.begin(), cells.end(), cell) == cells.end()) cells.push_back(cell);
  }
  for (const auto& [config, kind, session] : cells) {
    int trials = 0, told_first = 0, two_holders = 0, not_run = 0;
    std::size_t violations = 0;
    std::vector<std::int64_t> told_after_cut, taken_after_cut, leads;
    std::map<std::string, std::vector<std::int64_t>> marks;
    for (const auto& r : results) {
      if (r.config != config || r.kind != kind || r.session != session) continue;
      ++trials;
      if (!r.error.empty()) ++not_run;
      const PairOutcome& o = r.outcome;
      told_first += o.told_first();
      two_holders += o.taken_ns != 0 && !o.told_first();
      violations += o.report.violations.size();
      if (o.told_ns != 0) told_after_cut.push_back(o.told_ns - r.cut_ns);
      if (o.taken_ns != 0) taken_after_cut.push_back(o.taken_ns - r.cut_ns);
      if (o.told_ns != 0 && o.taken_ns != 0) leads.push_back(o.taken_ns - o.told_ns);
      for (const auto& [mark, at] : r.marks) marks[mark].push_back(at - r.cut_ns);
    }
    std::string extra;
    for (const auto& [mark, values] : marks) {
      extra += " " + mark + "_after_cut_ms_median=" + faults::ms_median(values);
    }
    std::printf(
        "RELIABILITY suite=netfaults scenario=%s config=%s client=%s session_ms=%lld trials=%d "
        "not_run=%d told_before_takeover=%d two_holders=%d violations=%zu "
        "told_after_cut_ms_median=%s told_after_cut_ms_worst=%s takeover_after_cut_ms_median=%s "
        "told_lead_ms_median=%s told_lead_ms_worst=%s%s\n",
        scenario.c_str(), to_string(config), to_string(kind),
        static_cast<long long>(session.count()), trials, not_run, told_first, two_holders,
        violations, faults::ms_median(told_after_cut).c_str(),
        faults::ms_max(told_after_cut).c_str(), faults::ms_median(taken_after_cut).c_str(),
        faults::ms_median(leads).c_str(), faults::ms_min(leads).c_str(), extra.c_str());
  }
  std::fflush(stdout);

  for (const auto& r : results) {
    const PairOutcome& o = r.outcome;
    std::string problems;
    if (!r.error.empty()) {
      problems += "\n  the trial could not run as designed: " + r.error;
    } else {
      if (o.taken_ns == 0) problems += "\n  the waiter never acquired";
      if (!o.told_first()) {
        problems += "\n  " + where + " was not told Lost before its waiter acquired: two holders";
      }
      if (!o.report.violations.empty()) problems += "\n  fault_checker: " + summarize(o.report);
      if (!r.unencrypted.empty()) {
        problems += "\n  asked to speak TLS, not encrypted:" + r.unencrypted;
      }
      if (runs_cli(r.kind) && !(o.holder_status && WIFEXITED(*o.holder_status) &&
                                WEXITSTATUS(*o.holder_status) == 76)) {
        problems += "\n  zklock exec did not exit 76 (lock lost): " +
                    (o.holder_status ? describe_wait_status(*o.holder_status)
                                     : std::string("still running"));
      }
    }
    if (!problems.empty()) {
      ADD_FAILURE() << scenario << ", " << describe(r) << problems << "\n" << r.evidence;
    }
  }
}

}  // namespace zklock::testing::netfaults
