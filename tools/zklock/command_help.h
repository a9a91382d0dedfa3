// The zklock CLI's help texts: the description, each command's footer (what it does, before the
// exit-code table) and examples (after it). Only command_line.cpp uses them.
#pragma once

namespace zklock::cli {

inline constexpr const char* kDescription =
    "zklock: distributed locks on ZooKeeper - flock(1) for a cluster.\n"
    "Fair (first come, first served), compatible with Apache Curator's InterProcessMutex and\n"
    "kazoo's Lock on the same path, and safe: `exec` stops its command when the lock is lost.";

inline constexpr const char* kMainFooter =
    "Run `zklock COMMAND --help` for a command's options.\n"
    "\n"
    "Durations: a number and a unit - ms, s, m or h - e.g. 500ms, 10s, 1.5m, 2h.\n"
    "Servers: --connect, else $ZKLOCK_CONNECT, else 127.0.0.1:2181.\n"
    "\n";

inline constexpr const char* kMainExamples =
    "\n"
    "Examples:\n"
    "  zklock exec /locks/nightly-backup -- /usr/local/bin/backup --full\n"
    "  zklock exec --timeout 10s /locks/deploy -- sh -c 'make deploy && make smoke-test'\n"
    "  zklock hold --description \"db maintenance\" /locks/db\n"
    "  zklock status --json /locks/deploy\n"
    "  zklock revoke /locks/reindex\n"
    "  zklock elect --again /services/scheduler -- ./scheduler\n"
    "  zklock leader --watch /services/scheduler\n";

// Everything after the first "--" is the command of `zklock exec`, verbatim: CLI11 never sees it
// (it would swallow a second "--" the command itself needs, as in `git log -- file`).
struct SplitArguments {
  int argc;                       // arguments before "--"
  bool separator = false;         // "--" was there
  std::vector<std::string> rest;  // after "--"
};

SplitArguments split_at_separator(int argc, const char* const argv[]) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--") == 0) return {i, true, {argv + i + 1, argv + argc}};
  }
  return {argc, false, {}};
}

inline constexpr const char* kExecFooter =
    "Synopsis: zklock exec [OPTIONS] LOCK_PATH -- COMMAND [ARGS...]\n"
    "\n"
    "The command runs directly (execvp-like, no shell) once the lock is held, with:\n"
    "  ZKLOCK_PATH           the lock path\n"
    "  ZKLOCK_NODE           our lock node, e.g. LOCK_PATH/_c_<uuid>-lock-0000000042\n"
    "  ZKLOCK_SEQUENCE       its sequence number (42)\n"
    "  ZKLOCK_FENCING_TOKEN  the fencing token: a decimal number, larger for every later\n"
    "                        holder of the lock; pass it to the resource you protect\n"
    "  ZKLOCK_SESSION_ID     the ZooKeeper session id, hex (0x...)\n"
    "\n"
    "Signals: SIGINT, SIGTERM and SIGHUP are forwarded to the command (to its process group,\n"
    "see --foreground). Received while still waiting, they cancel the wait: zklock leaves the\n"
    "queue and exits 128+N. If zklock itself is killed, the command is killed too.\n"
    "\n"
    "Lock lost: when ZooKeeper may have expired our session (someone else may hold the lock\n"
    "now), the command is stopped at once as --on-lost says and zklock exits 76. This happens\n"
    "before the server can hand the lock to anyone else. A mere disconnect (suspended) lets the\n"
    "command run on (reported with --verbose).\n"
    "\n"
    "When the command ends, the lock is released and the session closed before zklock exits.\n"
    "\n";

inline constexpr const char* kExecExamples =
    "\n"
    "Examples:\n"
    "  zklock exec /locks/nightly-backup -- /usr/local/bin/backup --full\n"
    "  zklock exec --timeout 30s --description \"deploy by $USER\" /locks/deploy -- make deploy\n"
    "  zklock exec --connect zk1:2181,zk2:2181,zk3:2181 /locks/report -- sh -c './report > out'\n";

inline constexpr const char* kElectFooter =
    "Synopsis: zklock elect [OPTIONS] ELECTION_PATH -- COMMAND [ARGS...]\n"
    "\n"
    "Leader election (a zklock::Mutex whose holder leads, as zklock::Election): campaigns -\n"
    "queues on ELECTION_PATH, first come, first served - and runs COMMAND while this\n"
    "participant leads, exactly as `zklock exec` runs it\n"
    "under a lock: the same environment (ZKLOCK_FENCING_TOKEN is the term), signals forwarded,\n"
    "and on Lost the command is stopped (--on-lost) before anyone else can lead. --value is\n"
    "what `zklock leader` shows for this participant. When the command ends the leadership\n"
    "passes to the next in line; with --again zklock campaigns again.\n"
    "Curator's LeaderSelector and kazoo's Election (with extra_lock_patterns=[\"-lock-\"]) take\n"
    "turns with it on one path.\n"
    "\n";

inline constexpr const char* kElectExamples =
    "\n"
    "Examples:\n"
    "  zklock elect --value \"$(hostname)\" --again /services/scheduler -- ./scheduler\n"
    "  zklock elect --revocable /services/reindexer -- ./reindex --all\n";

inline constexpr const char* kLeaderFooter =
    "Prints one line: TERM SESSION_ID NODE_PATH [since=UTC_TIME] [host=HOST pid=PID]\n"
    "value=\"VALUE\" - the leader's term (its fencing token), its ZooKeeper session (hex), its\n"
    "node, since when it leads (its own clock) and who it is (as a zklock leader's node says),\n"
    "and its value as a JSON string - or, when nobody leads, a message on stderr and exit 66.\n"
    "With --watch: that line for the leader now and again at each change of leader or of what\n"
    "its node says (a new zklock leader shows again once it has stamped since=) (\"none\" while\n"
    "nobody leads), flushed, until\n"
    "SIGINT, SIGTERM or SIGHUP (exit 0); a change after which a leader may have come and gone\n"
    "unseen is noted on stderr.\n"
    "\n";

inline constexpr const char* kLeaderExamples =
    "\n"
    "Examples:\n"
    "  zklock leader /services/scheduler\n"
    "  zklock leader --watch /services/scheduler\n";

inline constexpr const char* kHoldFooter =
    "Once the lock is held, one line goes to stdout (and is flushed):\n"
    "  FENCING_TOKEN SEQUENCE NODE_PATH\n"
    "or with --json one object:\n"
    "  {\"path\":...,\"node\":...,\"sequence\":42,\"fencing_token\":\"4294967338\",\n"
    "   \"czxid\":4294967338,\"session_id\":\"0x...\",\"shared\":false}\n"
    "The lock is then held until SIGINT, SIGTERM or SIGHUP (released; exit 0) or until it is\n"
    "lost (exit 76, message on stderr). For scripts that hold a lock across several steps:\n"
    "read the line, work, then kill the zklock process.\n"
    "\n";

inline constexpr const char* kHoldExamples =
    "\n"
    "Examples:\n"
    "  zklock hold --description maintenance /locks/db-migrations\n"
    "  zklock hold --json /locks/leader > lock.json &\n";

inline constexpr const char* kStatusFooter =
    "Text output: one line per contender in queue order, the holder(s) first:\n"
    "  POSITION ROLE NODE kind=K sequence=N czxid=N session=0x... naming=... host=... pid=... "
    "description=\"...\"\n"
    "ROLE is holder or waiting. kind is exclusive (a Mutex, Curator's InterProcessMutex, kazoo's\n"
    "Lock and WriteLock), write or read (a read/write lock: zklock's SharedMutex, Curator's\n"
    "InterProcessReadWriteLock, kazoo's ReadLock). Readers with no other kind ahead of them hold\n"
    "together; anyone else holds only when first.\n"
    "Nodes of other libraries (Apache Curator, kazoo) show their raw data as data=\"...\".\n"
    "\n"
    "--json prints one document:\n"
    "  "
    "{\"path\":\"/locks/x\",\"contenders\":[{\"position\":0,\"name\":\"_c_...-lock-0000000042\",\n"
    "   \"sequence\":42,\"czxid\":4294967338,\"session_id\":\"0x...\",\n"
    "   \"naming\":\"protected|plain|kazoo\",\"kind\":\"exclusive|write|read\",\"holder\":true,\n"
    "   \"host\":\"...\",\"pid\":123,"
    "   \"description\":\"...\",\"data\":\"<raw node data>\"}, ...]}\n"
    "host, pid and description are null for nodes zklock did not write.\n"
    "A lock path that does not exist is an empty queue (exit 0).\n"
    "\n"
    "--watch shows the queue again every --interval (default 1s) until Ctrl-C (or SIGTERM; exit\n"
    "0): a header with the path, the time and the session state, then one row per contender:\n"
    "  POS ROLE KIND AGE HOST PID DESCRIPTION\n"
    "AGE is the time since its node was created (for a holder, its wait included). On a terminal\n"
    "each refresh replaces the last; piped, they follow each other, separated by a blank line.\n"
    "A missing path (\"path does not exist\") or a failed read is shown, and the watch goes on.\n"
    "\n";

inline constexpr const char* kRevokeFooter =
    "Asks the holder of the lock to let go: writes \"__REVOKE__\" into its lock node (Apache\n"
    "Curator's Revoker does the same, so requests cross between zklock and Curator). The holder\n"
    "decides: `zklock exec --revocable` stops its command and releases, `zklock hold --revocable`\n"
    "releases, a program using the library hears of it (MutexOptions::on_revocation_requested).\n"
    "A zklock holder started without --revocable says so in its node, and is not asked (exit 77).\n"
    "The holders are the first contender, or every reader with only readers ahead of it; --node\n"
    "names one contender instead (a waiter asked is told once it acquires). On a semaphore's\n"
    "path the holders are its lease holders (SemaphoreOptions::on_revocation_requested), and\n"
    "--node names one lease node; on an election's, the leader (`zklock elect --revocable`).\n"
    "With credentials, only the holder's own identity may write its node (exit 77 for anyone\n"
    "else).\n"
    "\n";

inline constexpr const char* kRevokeExamples =
    "\n"
    "Examples:\n"
    "  zklock revoke /locks/nightly-backup\n"
    "  zklock revoke --node _c_...-lock-0000000042 /locks/deploy\n"
    "  zklock revoke --node _c_...-lease-0000000007 /semaphores/encoders\n";

inline constexpr const char* kStatusExamples =
    "\n"
    "Examples:\n"
    "  zklock status /locks/nightly-backup\n"
    "  zklock status --json /locks/deploy | jq -r '.contenders[0].host'\n"
    "  zklock status --watch --interval 500ms /locks/deploy\n";

}  // namespace zklock::cli
