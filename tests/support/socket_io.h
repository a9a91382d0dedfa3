// tests/support/socket_io.h: blocking-with-a-deadline socket I/O on loopback, for the tests and
// the test servers that talk TCP themselves (the four-letter-word client, the fault proxy's tests
// and their fake servers).
//
// Every call that waits takes a deadline and returns when it passes: a test never hangs on a
// socket. Descriptors come back as UniqueFd (invalid on failure).
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>

#include "support/unique_fd.h"

namespace zklock::testing {

using SteadyTime = std::chrono::steady_clock::time_point;

// Waits until `fd` is ready for `events` (POLLIN, POLLOUT), EINTR retried. True when ready
// (readable includes EOF and errors), false at the deadline or on a poll() failure.
bool wait_for_io(int fd, short events, SteadyTime deadline);

// A TCP connection to 127.0.0.1:`port`, blocking, TCP_NODELAY; invalid when refused. (The connect
// completes against the listen backlog: it succeeds even when the server then resets it.)
UniqueFd connect_loopback(int port);

// A listening socket on 127.0.0.1 at a port the kernel picks, written to `*port`, with a backlog
// of `backlog` (the kernel completes that many connects that nobody accepts); invalid on failure.
UniqueFd listen_loopback(int* port, int backlog = 64);

// A port on 127.0.0.1 whose SYNs the kernel drops: a listener with a backlog of 0 that one
// connection (held in `*filler`) already fills. A connect to it waits, unanswered, as to a host
// that is down. Returns the listener (keep both open); invalid on failure.
UniqueFd listen_dropping_syns(int* port, UniqueFd* filler);

// True when a TCP connection to address:port (numeric IPv4) is accepted - a server's port that
// speaks no four-letter words (its TLS port). A blocking connect.
bool accepts_connections(const std::string& address, int port);

// Sends all of `data` (MSG_NOSIGNAL, EINTR retried; blocking sockets). False when the connection
// broke first.
bool send_all(int fd, std::string_view data);

enum class ReadResult { kOk, kTimeout, kEof, kError };

// Reads exactly `n` bytes, appended to `*out`, before the deadline.
ReadResult recv_exact(int fd, std::size_t n, std::string* out, SteadyTime deadline);

// Waits until the peer closes `fd` (kEof) or resets it (kError, errno in `*error` when given),
// discarding data meanwhile; kTimeout at the deadline.
ReadResult wait_closed(int fd, SteadyTime deadline, int* error = nullptr);

// True when nothing - no byte, no EOF, no error - arrives on `fd` within `window`. The one kind of
// fixed-length wait a test may make: it checks an absence.
bool stays_silent(int fd, std::chrono::milliseconds window);

}  // namespace zklock::testing
