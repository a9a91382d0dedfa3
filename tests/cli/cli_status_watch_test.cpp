// tests/cli/cli_status_watch_test.cpp: `zklock status --watch` - the real binary against a real
// ZooKeeper server, in a real terminal: a detached tmux session whose pane the test reads
// (`tmux capture-pane`) while a holder and a waiter (`zklock hold`) come and go; Ctrl-C through
// tmux ends it with exit 0 and the cursor shown again. And piped: blocks separated by a blank
// line, no escape sequences, a missing path and an empty queue shown as such, no read faster than
// the interval; SIGTERM and SIGHUP end it as Ctrl-C does.
//
// Every wait polls the pane (or the output) for what must appear, with a deadline; none sleeps.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "cli_process.h"
#include "support/files.h"
#include "support/process.h"
#include "support/temp_dir.h"
#include "support/wait.h"
#include "test_env.h"

namespace zklock::testing {
namespace {

using std::chrono::milliseconds;

constexpr const char* kInterval = "200ms";
constexpr milliseconds kIntervalMs{200};
// tmux is asked often while the test waits for the pane; every 50 ms is fast enough for a 200 ms
// refresh and spares a loaded machine a hundred tmux clients a second.
constexpr milliseconds kPanePoll{50};

// tmux from $PATH, or nullopt when it is not installed.
std::optional<std::string> find_tmux() {
  const char* path = std::getenv("PATH");  // NOLINT(concurrency-mt-unsafe): nothing sets it
  std::istringstream dirs(path != nullptr ? path : "/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const std::string candidate = (dir.empty() ? "." : dir) + "/tmux";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return std::nullopt;
}

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};

// Runs `argv` to its end (at most kProcessTimeout: a hung tmux fails the test, it does not hang),
// its environment extended by `env` ("NAME=VALUE").
CommandResult run_to_end(const TempDir& dir, std::vector<std::string> argv,
                         std::vector<std::string> env) {
  static std::atomic<int> counter{0};
  SpawnOptions options;
  options.log_path = dir.file("command-" + std::to_string(counter++) + ".log");
  options.extra_env = std::move(env);
  ChildProcess child(std::move(argv), options);
  const auto status = child.wait_exit(kProcessTimeout);
  if (!status) {
    ADD_FAILURE() << "did not exit within the timeout: " << read_file(options.log_path);
    child.kill();
    return {-1, read_file(options.log_path)};
  }
  return {exit_code_of(*status), read_file(options.log_path)};
}

// A tmux server of the test's own (a socket name no other test uses, in the test's directory:
// TMUX_TMPDIR, so that no socket file outlives the test) with one detached session running
// `command` in a 160x40 pane. The server runs in the foreground (-D) as a ChildProcess, so
// it dies with the test however the test ends (support/process.h); the destructor also asks it
// to go (kill-server). The pane stays when its process exits (remain-on-exit), so that its exit
// status can be read; everything the process writes is also copied, escape sequences and all, to
// a file (pipe-pane, set up in the same tmux command as the session, before tmux reads anything
// from the pane).
class TmuxPane {
 public:
  TmuxPane(const TempDir& dir, std::string tmux_binary, const std::vector<std::string>& command)
      : dir_(dir),
        tmux_(std::move(tmux_binary)),
        socket_("zklock-watch-" + std::to_string(::getpid()) + "-" + std::to_string(next_++)),
        raw_log_(dir.file(socket_ + ".raw")),
        env_({"TMUX_TMPDIR=" + dir.path()}) {
    const std::string config = dir.file(socket_ + ".conf");
    write_file(config, "set-option -g remain-on-exit on\nset-option -g status off\n");
    SpawnOptions options;
    options.log_path = dir.file(socket_ + ".server.log");
    options.extra_env = env_;
    server_ = std::make_unique<ChildProcess>(
        std::vector<std::string>{tmux_, "-D", "-L", socket_, "-f", config}, options);
    // Only new-session starts a server of its own: wait until ours listens (and read its config).
    started_ = wait_until(
        [&] {
          const CommandResult shown = run_to_end(
              dir_, {tmux_, "-L", socket_, "show-options", "-gv", "remain-on-exit"}, env_);
          return shown.exit_code == 0 && shown.output == "on\n";
        },
        kEventTimeout, kPanePoll);
    if (!started_) {
      ADD_FAILURE() << "the tmux server did not start: " << read_file(options.log_path);
      return;  // new-session would start a server of its own, outside the test's control
    }
    std::vector<std::string> args = {"new-session", "-d", "-s", kTarget, "-x", "160", "-y", "40"};
    args.insert(args.end(), command.begin(), command.end());
    args.insert(args.end(), {";", "pipe-pane", "-t", kTarget, "cat > '" + raw_log_ + "'"});
    run_tmux(args);
  }
  // False when the tmux server did not start (the failure is reported).
  bool started() const { return started_; }
  ~TmuxPane() {
    run_to_end(dir_, {tmux_, "-L", socket_, "kill-server"}, env_);
    server_.reset();  // reaps it (SIGTERM, then SIGKILL, if kill-server did not end it)
  }
  TmuxPane(const TmuxPane&) = delete;
  TmuxPane& operator=(const TmuxPane&) = delete;

  // What the pane shows now, one line per screen row.
  std::string screen() const { return run_tmux({"capture-pane", "-p", "-t", kTarget}); }
  // A tmux format about the pane, e.g. "#{pane_dead}".
  std::string pane_format(const std::string& format) const {
    std::string text = run_tmux({"list-panes", "-t", kTarget, "-F", format});
    while (!text.empty() && text.back() == '\n') text.pop_back();
    return text;
  }
  void send_keys(const std::string& keys) const { run_tmux({"send-keys", "-t", kTarget, keys}); }
  // How the pane's process ended, once tmux knows: "status=N signal=" or "status= signal=N";
  // empty while the pane lives or tmux has not reaped it yet. tmux can miss the SIGCHLD of a
  // pane's process: Debian's tmux is built with libutempter, which puts in a SIGCHLD handler of its
  // own while it removes the pane's utmp record - just when the pane's terminal has closed (tmux
  // issue 311). The zombie then waits for the next SIGCHLD, so a dead pane without a status gets
  // one from here (harmless to the server's other processes, which ignore it).
  std::string ending() {
    const std::string state =
        pane_format("#{pane_dead} status=#{pane_dead_status} signal=#{pane_dead_signal}");
    if (state.rfind("1 ", 0) != 0) return "";
    if (state == "1 status= signal=") {
      server_->signal(SIGCHLD);
      return "";
    }
    return state.substr(2);
  }
  // Everything the pane's process wrote so far (pipe-pane copies it with a delay).
  std::string raw_output() const { return read_file(raw_log_); }

 private:
  static constexpr const char* kTarget = "watch";
  std::string run_tmux(std::vector<std::string> args) const {
    const std::string name = args.front();
    args.insert(args.begin(), {tmux_, "-L", socket_});
    const CommandResult result = run_to_end(dir_, args, env_);
    EXPECT_EQ(result.exit_code, 0) << "tmux " << name << ": " << result.output;
    return result.output;
  }

  const TempDir& dir_;
  const std::string tmux_;
  const std::string socket_;
  const std::string raw_log_;
  const std::vector<std::string> env_;
  std::unique_ptr<ChildProcess> server_;
  bool started_ = false;
  static inline std::atomic<int> next_{0};
};

// One contender's row as the watch shows it: POS ROLE KIND AGE HOST PID DESCRIPTION.
struct Row {
  std::string position, role, kind, age, host, pid, description;
  bool operator==(const Row& other) const {
    return position == other.position && role == other.role && kind == other.kind &&
           host == other.host && pid == other.pid && description == other.description;  // not age
  }
};

std::ostream& operator<<(std::ostream& out, const Row& row) {
  return out << row.position << ' ' << row.role << ' ' << row.kind << ' ' << row.age << ' '
             << row.host << ' ' << row.pid << ' ' << row.description;
}

// What the pane shows: how many header lines for `path` are on the screen (one, when each refresh
// replaces the last), and the rows under the last header's column titles.
struct View {
  int headers = 0;
  std::vector<Row> rows;
  std::string text;
};

View view_of(const std::string& screen, const std::string& path) {
  View view;
  view.text = screen;
  bool in_table = false;
  for (const std::string& line : lines_of(screen)) {
    if (line.rfind(path + "  ", 0) == 0) {
      ++view.headers;
      in_table = false;
      view.rows.clear();
      continue;
    }
    if (line.rfind("POS ", 0) == 0) {
      in_table = true;
      continue;
    }
    if (!in_table || line.empty()) {
      in_table = false;
      continue;
    }
    std::istringstream fields(line);
    Row row;
    fields >> row.position >> row.role >> row.kind >> row.age >> row.host >> row.pid;
    std::getline(fields >> std::ws, row.description);
    view.rows.push_back(row);
  }
  return view;
}

// "12.3s" or "4m05s" as milliseconds (truncated to what is shown); nullopt for anything else.
std::optional<milliseconds> age_of(const std::string& text) {
  long long whole = 0;
  long long part = 0;
  char unit[4] = {};
  if (std::sscanf(text.c_str(), "%lld.%1llds%1s", &whole, &part, unit) == 2 && text.back() == 's') {
    return milliseconds(whole * 1000 + part * 100);
  }
  if (std::sscanf(text.c_str(), "%lldm%2llds%1s", &whole, &part, unit) == 2 && text.back() == 's') {
    return milliseconds((whole * 60 + part) * 1000);
  }
  return std::nullopt;
}

std::string host_name() {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  return host;
}

// The row of `cli`, a `zklock hold --description DESCRIPTION` on an exclusive lock.
Row expected_row(int position, bool holder, const Cli& cli, const std::string& description) {
  Row row;
  row.position = std::to_string(position);
  row.role = holder ? "holder" : "waiting";
  row.kind = "exclusive";
  row.host = host_name();
  row.pid = std::to_string(cli.pid());
  row.description = nlohmann::json(description).dump();
  return row;
}

std::string rows_text(const std::vector<Row>& rows) {
  std::ostringstream out;
  for (const Row& row : rows) out << row << '\n';
  return out.str();
}

// How often `needle` occurs in `text`.
std::size_t count_of(const std::string& text, const std::string& needle) {
  std::size_t count = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
    ++count;
  }
  return count;
}

class CliStatusWatch : public CliTest {};

TEST_F(CliStatusWatch, RefreshesInPlaceInATerminalAndEndsOnCtrlC) {
  const std::optional<std::string> tmux = find_tmux();
  if (!tmux) {
    const char* ci = std::getenv("CI");  // NOLINT(concurrency-mt-unsafe): nothing sets it
    if (ci != nullptr && std::string(ci) == "true") {
      FAIL() << "tmux is not installed; CI must have it (scripts/deps.sh lists it)";
    }
    GTEST_SKIP() << "tmux is not installed (scripts/deps.sh installs it)";
  }
  const auto test_start = std::chrono::system_clock::now();

  Cli holder(dir_, cli_args("hold", server_.connect, {"--description", "watch holder", path_}));
  holder.wait_for_line();  // it holds
  Cli waiter(dir_, cli_args("hold", server_.connect, {"--description", "watch waiter", path_}));
  ASSERT_TRUE(
      wait_until([&] { return lock_children(session_, path_).size() == 2; }, kEventTimeout));

  TmuxPane pane(
      dir_, *tmux,
      {kCli, "status", "--watch", "--connect", server_.connect, "--interval", kInterval, path_});
  ASSERT_TRUE(pane.started());
  const std::vector<Row> queued = {expected_row(0, true, holder, "watch holder"),
                                   expected_row(1, false, waiter, "watch waiter")};
  View view;
  ASSERT_TRUE(wait_until(
      [&] {
        view = view_of(pane.screen(), path_);
        return view.rows == queued;
      },
      kEventTimeout, kPanePoll))
      << "the pane never showed the holder and the waiter; it shows:\n"
      << view.text << "expected rows:\n"
      << rows_text(queued);
  const std::string first_holder_age = view.rows[0].age;
  const auto holder_age = age_of(view.rows[0].age);
  const auto waiter_age = age_of(view.rows[1].age);
  ASSERT_TRUE(holder_age && waiter_age) << view.text;
  EXPECT_GE(*holder_age, *waiter_age) << "the holder queued first:\n" << view.text;
  EXPECT_LE(*holder_age, std::chrono::duration_cast<milliseconds>(std::chrono::system_clock::now() -
                                                                  test_start) +
                             milliseconds(1000))
      << "the age is the time since the node was created:\n"
      << view.text;
  EXPECT_NE(view.text.find("  session Connected  every 200ms"), std::string::npos) << view.text;
  EXPECT_EQ(pane.pane_format("#{cursor_flag}"), "0") << "the cursor is hidden while watching";

  // Refreshed in place: once the age has moved on, the screen still has one header, not two.
  ASSERT_TRUE(wait_until(
      [&] {
        view = view_of(pane.screen(), path_);
        return view.rows.size() == 2 && view.rows[0].age != first_holder_age;
      },
      kEventTimeout, kPanePoll))
      << "the holder's age never moved on from " << first_holder_age << ":\n"
      << view.text;
  EXPECT_EQ(view.headers, 1) << "each refresh must replace the last:\n" << view.text;

  // The holder goes: the waiter holds, alone in the queue.
  holder.signal(SIGTERM);
  EXPECT_EQ(holder.wait(), 0) << holder.output();
  const std::vector<Row> handed_on = {expected_row(0, true, waiter, "watch waiter")};
  ASSERT_TRUE(wait_until(
      [&] {
        view = view_of(pane.screen(), path_);
        return view.rows == handed_on;
      },
      kEventTimeout, kPanePoll))
      << "the pane never showed the waiter as the holder; it shows:\n"
      << view.text;
  EXPECT_EQ(view.headers, 1) << view.text;

  // Ctrl-C in the terminal: zklock exits 0 and shows the cursor again.
  EXPECT_EQ(pane.pane_format("#{pane_dead}"), "0") << "still watching before Ctrl-C";
  pane.send_keys("C-c");
  std::string ending;
  ASSERT_TRUE(wait_until(
      [&] {
        ending = pane.ending();
        return !ending.empty();
      },
      kEventTimeout, kPanePoll))
      << "zklock status --watch did not exit on Ctrl-C; the pane shows:\n"
      << pane.screen();
  EXPECT_EQ(ending, "status=0 signal=") << pane.screen();
  // What zklock wrote to the terminal, as pipe-pane copied it (the copy may lag behind).
  std::string raw;
  EXPECT_TRUE(wait_until(
      [&] {
        raw = pane.raw_output();
        const auto shown = raw.rfind("\x1b[?25h");
        return shown != std::string::npos && shown > raw.rfind("\x1b[H\x1b[2J");
      },
      kEventTimeout, kPanePoll))
      << "the cursor was not shown again after the last view";
  EXPECT_EQ(raw.rfind("\x1b[?25l", 0), 0u) << "the cursor is hidden first";
  EXPECT_EQ(count_of(raw, "\x1b[?25l"), 1u);
  EXPECT_GE(count_of(raw, "\x1b[H\x1b[2J"), 3u) << "the screen is cleared at each refresh";

  waiter.signal(SIGTERM);
  EXPECT_EQ(waiter.wait(), 0) << waiter.output();
}

TEST_F(CliStatusWatch, PipedRefreshesAreBlocksAndAMissingPathIsWatchedUntilItAppears) {
  const auto start = std::chrono::steady_clock::now();
  Cli watch(dir_, cli_args("status", server_.connect, {"--watch", "--interval", kInterval, path_}));
  ASSERT_TRUE(
      wait_until([&] { return watch.output().find("path does not exist\n") != std::string::npos; },
                 kEventTimeout))
      << watch.output();
  session_.create(path_, "", CreateMode::kPersistent, /*make_parents=*/true);
  ASSERT_TRUE(wait_until(
      [&] {
        return watch.output().find("no contenders (the lock is free)\n") != std::string::npos;
      },
      kEventTimeout))
      << watch.output();
  watch.signal(SIGTERM);
  EXPECT_EQ(watch.wait(), 0) << watch.output();
  const auto elapsed = std::chrono::steady_clock::now() - start;

  const std::string output = watch.output();
  EXPECT_EQ(output.find('\x1b'), std::string::npos) << "no escape sequences when piped";
  // Blocks: a header, then what it says, a blank line between two blocks.
  std::vector<std::string> blocks;
  for (std::size_t from = 0; from < output.size();) {
    const auto end = output.find("\n\n", from);
    blocks.push_back(
        output.substr(from, end == std::string::npos ? std::string::npos : end + 1 - from));
    from = end == std::string::npos ? output.size() : end + 2;
  }
  ASSERT_GE(blocks.size(), 2u) << output;
  bool created = false;
  for (const std::string& block : blocks) {
    SCOPED_TRACE(block);
    const auto lines = lines_of(block);
    ASSERT_EQ(lines.size(), 2u);
    EXPECT_EQ(lines[0].rfind(path_ + "  ", 0), 0u);
    EXPECT_NE(lines[0].find("  session Connected  every 200ms"), std::string::npos);
    if (lines[1] == "no contenders (the lock is free)") {
      created = true;
    } else {
      EXPECT_EQ(lines[1], "path does not exist");
      EXPECT_FALSE(created) << "the path was never deleted";
    }
  }
  EXPECT_TRUE(created);
  // Each read starts at least one interval after the one before.
  EXPECT_LE(static_cast<long long>(blocks.size()), elapsed / kIntervalMs + 1)
      << blocks.size() << " refreshes in "
      << std::chrono::duration_cast<milliseconds>(elapsed).count() << " ms";
}

TEST_F(CliStatusWatch, HangupEndsTheWatchLikeCtrlC) {
  Cli watch(dir_, cli_args("status", server_.connect, {"--watch", "--interval", kInterval, path_}));
  ASSERT_TRUE(
      wait_until([&] { return watch.output().find("path does not exist\n") != std::string::npos; },
                 kEventTimeout))
      << watch.output();
  watch.signal(SIGHUP);  // the terminal went away
  EXPECT_EQ(watch.wait(), 0) << watch.output();
}

}  // namespace
}  // namespace zklock::testing
