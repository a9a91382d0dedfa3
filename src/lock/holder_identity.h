// What zklock writes into its lock nodes: who holds or waits (internal).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace zklock::detail {

/// Returns: a small JSON object {"lib":"zklock","host":...,"pid":...,"revocable":...,
/// "description":...} naming this process, for `zklock status`, `zklock revoke` and operators.
std::string holder_identity(const std::string& description, bool revocable);

/// Returns: `text` escaped as the inside of a JSON string.
std::string json_escape(const std::string& text);

/// Returns: true if `data` is one of zklock's node-data objects (it starts with {"lib":"zklock").
bool is_holder_identity(std::string_view data) noexcept;

/// Returns: the string value of top-level member `key` of `json`, one of our own node-data
/// objects (holder_identity()), unescaped; nullopt if `json` is not one of ours (it does not start
/// with {"lib":"zklock"), has no such member, or the member is not a well-formed string.
std::optional<std::string> identity_string_field(std::string_view json, std::string_view key);

}  // namespace zklock::detail
