// What zklock writes into its lock nodes: who holds or waits (internal).
#pragma once

#include <string>

namespace zklock::detail {

/// Returns: a small JSON object {"lib":"zklock","host":...,"pid":...,"revocable":...,
/// "description":...} naming this process, for `zklock status`, `zklock revoke` and operators.
std::string holder_identity(const std::string& description, bool revocable);

/// Returns: `text` escaped as the inside of a JSON string.
std::string json_escape(const std::string& text);

}  // namespace zklock::detail
