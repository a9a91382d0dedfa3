// tests/netfaults/require_netns.h: how a test asks for network namespaces.
//
// ZKLOCK_REQUIRE_NETNS() at the top of a test: when namespaces cannot be made here (not root, no
// iproute2, the kernel refuses; see netns_unavailable_reason()), the test is SKIPPED with that
// reason - unless ZKLOCK_REQUIRE_NETNS=1 is set (CI sets it), in which case it FAILS with it, so a
// machine that silently cannot run these tests never passes for one that ran them.
#pragma once

#include <gtest/gtest.h>

#include "support/netns.h"

#define ZKLOCK_REQUIRE_NETNS()                                                           \
  do {                                                                                   \
    if (const auto zklock_netns_why = ::zklock::testing::netns_unavailable_reason()) {   \
      if (::zklock::testing::netns_required()) {                                         \
        FAIL() << "ZKLOCK_REQUIRE_NETNS=1, but network namespaces cannot be made here: " \
               << *zklock_netns_why;                                                     \
      }                                                                                  \
      GTEST_SKIP() << "network namespaces cannot be made here: " << *zklock_netns_why;   \
    }                                                                                    \
  } while (0)
