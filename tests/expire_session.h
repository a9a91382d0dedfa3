// tests/expire_session.h: ends a Session on the server, as its expiry would - its ephemeral nodes
// go at once, unreleased - without waiting for a timeout.
//
// What it guarantees: when expire_on_server() returns true, the server has ended the session of
// `s` (a second handle attached with its id and password was closed, which the server treats as
// the session's end) and `s` has found out as it would after an expiry: Lost, then a new session.
// False if that could not be brought about in five tries.
#pragma once

#include <zookeeper/zookeeper.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "session/session_core.h"
#include "support/wait.h"
#include "zklock/session.h"

namespace zklock::testing {

inline bool expire_on_server(Session& s, const std::string& connect) {
  using namespace std::chrono_literals;
  const std::int64_t id = s.session_id();
  const std::string passwd = detail::SessionAccess::core(s)->session_password();
  clientid_t cid{};
  cid.client_id = id;
  std::memcpy(cid.passwd, passwd.data(), std::min(passwd.size(), sizeof cid.passwd));
  zoo_set_debug_level(ZOO_LOG_LEVEL_ERROR);
  // If our own client wins the session back before the close (it reconnects at once when the
  // server moves the session), the close is refused as "session moved": try again.
  for (int attempt = 0; attempt < 5; ++attempt) {
    zhandle_t* other = zookeeper_init(connect.c_str(), nullptr, 4000, &cid, nullptr, 0);
    if (other == nullptr) return false;
    wait_until([&] { return zoo_state(other) == ZOO_CONNECTED_STATE; }, 10s);
    zookeeper_close(other);
    if (wait_until([&] { return s.session_id() != id; }, 10s)) return true;  // a new session
  }
  return false;
}

}  // namespace zklock::testing
