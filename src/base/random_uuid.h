// Random (version 4) UUIDs for lock node names (internal).
#pragma once

#include <string>

namespace zklock::detail {

/// Returns: a fresh random UUID, "xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx", 122 bits from the kernel's
/// random source (getrandom), so that no two contenders anywhere pick the same one. A
/// pseudo-random generator seeded from 32 bits would repeat its sequence across about 2^16
/// processes (birthday bound); the kernel's source has no such seed.
std::string random_uuid();

}  // namespace zklock::detail
