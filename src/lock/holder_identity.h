// What zklock writes into its lock nodes: who holds or waits (internal).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace zklock::detail {

/// Returns: a small JSON object {"lib":"zklock","host":...,"pid":...,"revocable":...,
/// "held_since":...,"description":...} naming this process, for `zklock status`, `zklock revoke`,
/// Election::leader() and operators. `held_since_ms` (milliseconds since the Unix epoch, by this
/// host's clock) is left out when nullopt: only a holder that stamps its node has it
/// (MutexOptions::stamp_held_since).
std::string holder_identity(const std::string& description, bool revocable,
                            std::optional<std::int64_t> held_since_ms = std::nullopt);

/// Returns: `text` escaped as the inside of a JSON string.
std::string json_escape(const std::string& text);

/// Returns: true if `data` is one of zklock's node-data objects (it starts with {"lib":"zklock").
bool is_holder_identity(std::string_view data) noexcept;

/// Returns: the string value of top-level member `key` of `json`, one of our own node-data
/// objects (holder_identity()), unescaped; nullopt if `json` is not one of ours (it does not start
/// with {"lib":"zklock"), has no such member, or the member is not a well-formed string.
std::optional<std::string> identity_string_field(std::string_view json, std::string_view key);

/// Returns: the integer value of top-level member `key` of `json`, one of our own node-data
/// objects; nullopt if `json` is not one of ours, has no such member, or it is not an integer
/// that fits 64 bits.
std::optional<std::int64_t> identity_integer_field(std::string_view json, std::string_view key);

}  // namespace zklock::detail
