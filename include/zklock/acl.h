// zklock/acl.h: who may change or delete the nodes zklock creates.
//
// ZooKeeper checks a node's ACL for reading and writing the node itself, and its parent's ACL for
// creating and deleting children: whoever may DELETE on a lock path may delete any lock node under
// it - a held one included, which hands the lock to the next waiter while the holder still works.
// So the lock path (and every parent zklock creates) carries the same ACL as the lock nodes.
//
// The default (SessionOptions::node_acl unset):
//   * with credentials: creator_all_world_read() - the identity the Session authenticated as may
//     do everything, everyone else may only read (so `zklock status` works for anyone). Contenders
//     must then share the credentials: a session without them can neither queue, nor delete or
//     change a lock node or a parent zklock created.
//   * without credentials: open_acl() - anyone may do anything, as ZooKeeper's default.
// Nodes that already exist keep the ACL they have: zklock never changes an existing node's ACL.
#pragma once

#include <string>
#include <vector>

namespace zklock {

/// ZooKeeper's permission bits.
namespace permission {
inline constexpr int kRead = 1 << 0;
inline constexpr int kWrite = 1 << 1;
inline constexpr int kCreate = 1 << 2;
inline constexpr int kDelete = 1 << 3;
inline constexpr int kAdmin = 1 << 4;
inline constexpr int kAll = kRead | kWrite | kCreate | kDelete | kAdmin;
}  // namespace permission

/// One ACL entry: `permissions` granted to `scheme`:`id` ("world":"anyone", "auth":"" - the
/// creator's authenticated identities -, "digest":"user:base64(sha1(user:password))", "ip":...).
struct AclEntry {
  int permissions = 0;
  std::string scheme;
  std::string id;

  friend bool operator==(const AclEntry& a, const AclEntry& b) {
    return a.permissions == b.permissions && a.scheme == b.scheme && a.id == b.id;
  }
};

using Acl = std::vector<AclEntry>;

/// Returns: the creating session's identities may do everything; anyone may read. Needs a Session
///   with credentials (the server refuses it otherwise).
inline Acl creator_all_world_read() {
  return {{permission::kAll, "auth", ""}, {permission::kRead, "world", "anyone"}};
}

/// Returns: anyone may do everything (ZooKeeper's default, "OPEN_ACL_UNSAFE").
inline Acl open_acl() { return {{permission::kAll, "world", "anyone"}}; }

}  // namespace zklock
