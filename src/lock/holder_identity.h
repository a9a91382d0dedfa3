// What zklock writes into its lock nodes: who holds or waits (internal).
#pragma once

#include <string>

namespace zklock::detail {

/// Returns: a small JSON object {"lib":"zklock","host":...,"pid":...,"description":...} naming this
/// process, for `zklock status` and operators.
std::string holder_identity(const std::string& description);

/// Returns: `text` escaped as the inside of a JSON string.
std::string json_escape(const std::string& text);

}  // namespace zklock::detail
