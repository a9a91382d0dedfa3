// Validation of znode paths, lock paths and connect strings (internal).
#pragma once

#include <string>
#include <string_view>

namespace zklock::detail {

/// Returns: an empty string if `path` is a valid absolute znode path, else why it is not.
std::string znode_path_problem(std::string_view path);

/// Throws InvalidArgumentError unless `path` is usable as a lock path: a valid znode path, not "/",
/// not at or under /zookeeper.
void validate_lock_path(std::string_view path);

/// Throws InvalidArgumentError unless `path` is a valid znode path ("/" allowed).
void validate_node_path(std::string_view path, std::string_view what);

/// Throws InvalidArgumentError unless `connect` is "host:port[,host:port...][/chroot]" with ports
/// in 1..65535, non-empty hosts and a valid chroot.
void validate_connect_string(std::string_view connect);

/// Returns: the parent of an absolute path ("/" for "/a").
std::string parent_path(std::string_view path);

}  // namespace zklock::detail
