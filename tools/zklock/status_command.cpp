#include "status_command.h"

#include <algorithm>
#include <iostream>
#include <nlohmann/json.hpp>
#include <utility>

#include "contender_view.h"
#include "duration.h"
#include "exit_codes.h"
#include "zklock/mutex.h"

namespace zklock::cli {
namespace {

using nlohmann::json;

constexpr const char* kStatusFooter =
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

constexpr const char* kStatusExamples =
    "\n"
    "Examples:\n"
    "  zklock status /locks/nightly-backup\n"
    "  zklock status --json /locks/deploy | jq -r '.contenders[0].host'\n"
    "  zklock status --watch --interval 500ms /locks/deploy\n";

void print_json(const std::string& path, const std::vector<Contender>& contenders) {
  json list = json::array();
  const std::vector<bool> holding = holders(contenders);
  for (std::size_t i = 0; i < contenders.size(); ++i) {
    const Contender& c = contenders[i];
    const Identity identity = identity_of(c.data);
    list.push_back({
        {"position", i},
        {"name", c.name},
        {"sequence", c.sequence},
        {"czxid", c.czxid},
        {"session_id", session_id_hex(c.ephemeral_owner)},
        {"naming", naming_name(c.naming)},
        {"kind", kind_name(c.kind)},
        {"holder", static_cast<bool>(holding[i])},
        {"host", identity.host},
        {"pid", identity.pid},
        {"description", identity.description},
        {"data", c.data},
    });
  }
  const json document = {{"path", path}, {"contenders", std::move(list)}};
  std::cout << document.dump(2, ' ', false, json::error_handler_t::replace) << '\n';
}

void print_text(const std::string& path, const std::vector<Contender>& contenders) {
  if (contenders.empty()) {
    std::cout << path << ": no contenders (the lock is free)\n";
    return;
  }
  const std::vector<bool> holding = holders(contenders);
  const auto holder_count = std::count(holding.begin(), holding.end(), true);
  std::cout << path << ": " << contenders.size()
            << (contenders.size() == 1 ? " contender" : " contenders")
            << (holder_count > 1 ? ", holders first\n" : ", holder first\n");
  for (std::size_t i = 0; i < contenders.size(); ++i) {
    const Contender& c = contenders[i];
    const Identity identity = identity_of(c.data);
    std::cout << i << ' ' << (holding[i] ? "holder" : "waiting") << ' ' << c.name
              << " kind=" << kind_name(c.kind) << " sequence=" << c.sequence << " czxid=" << c.czxid
              << " session=" << session_id_hex(c.ephemeral_owner)
              << " naming=" << naming_name(c.naming);
    if (identity.ours) {
      if (identity.host.is_string()) std::cout << " host=" << identity.host.get<std::string>();
      if (!identity.pid.is_null()) std::cout << " pid=" << identity.pid.dump();
      if (identity.description.is_string()) {
        std::cout << " description=" << quoted(identity.description.get<std::string>());
      }
    } else {
      std::cout << " data=" << quoted(c.data);
    }
    std::cout << '\n';
  }
}

}  // namespace

CLI::App* add_status_command(CLI::App& app, StatusOptions& status, CommonOptions& common) {
  auto* command = add_lock_path_command(
      app,
      {"status", "Show the lock's queue: the holder first, then the waiters, with who they are",
       kStatusFooter, kStatusExamples, &status.path, &common});
  auto* json_flag =
      command->add_flag("--json", status.json, "print one JSON document")->group("Output");
  auto* watch_flag = command
                         ->add_flag("--watch", status.watch,
                                    "show the queue again every --interval until interrupted")
                         ->excludes(json_flag)
                         ->group("Output");
  add_duration_option(*command, "--interval", status.interval,
                      "with --watch: how long between two reads of the queue", true)
      ->default_str(format_duration(status.interval))
      ->needs(watch_flag)
      ->group("Output");
  return command;
}

int run_status(const StatusOptions& status, const CommonOptions& common, const Console& console) {
  const auto session = open_session(common, console);
  // Only for contenders(): this Mutex is never locked, so it never creates a node.
  const Mutex mutex(*session, status.path);
  const std::vector<Contender> contenders = mutex.contenders();
  if (status.json) {
    print_json(status.path, contenders);
  } else {
    print_text(status.path, contenders);
  }
  std::cout.flush();
  return exit_code::kOk;
}

}  // namespace zklock::cli
