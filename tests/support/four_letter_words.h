// tests/support/four_letter_words.h: ZooKeeper's "four letter word" admin commands, and parsers.
//
// A 4lw exchange: connect to the server's client port (127.0.0.1 unless a host is given), send the
// four letters, read until the server closes the connection. The server must whitelist the word
// (`4lw.commands.whitelist=*` in the servers started by zk_server.h; a word that is not whitelisted
// gets an explanatory sentence and an unknown word gets an empty reply). Outputs below are those of
// ZooKeeper 3.8.
//
// These let tests observe the server side directly: which sessions hold which ephemerals and
// watches, independently of what the client library believes.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace zklock::testing {

// Sends `word` to the server on 127.0.0.1:`port` and returns the complete reply (possibly empty),
// or std::nullopt when the server cannot be reached or has not closed the connection before
// `timeout` (a frozen server, for instance). Never blocks longer than `timeout` (plus scheduling).
std::optional<std::string> try_four_letter_word(
    int port, std::string_view word,
    std::chrono::milliseconds timeout = std::chrono::milliseconds(2000));

// The same with the server at `host` (a name or an address: a server elsewhere for zklock-bench,
// one in a network namespace for tests/netfaults; every address it resolves to is tried in turn,
// within the one timeout).
std::optional<std::string> try_four_letter_word(
    const std::string& host, int port, std::string_view word,
    std::chrono::milliseconds timeout = std::chrono::milliseconds(2000));

// As try_four_letter_word, but returns an empty string when the server is unreachable or slow.
std::string four_letter_word(int port, std::string_view word,
                             std::chrono::milliseconds timeout = std::chrono::milliseconds(2000));

// As try_four_letter_word(host, ...), "" when the server is unreachable or slow.
std::string four_letter_word(const std::string& host, int port, std::string_view word,
                             std::chrono::milliseconds timeout = std::chrono::milliseconds(2000));

// ---- Parsers. All are lenient: lines they do not recognise are skipped, never an error. ----

// `mntr`: one "key<TAB>value" per line -> {key: value}.
std::map<std::string, std::string> parse_mntr(std::string_view text);

// `srvr` / `stat`: the value of the "Mode: " line ("standalone", "leader", "follower",
// "observer"), or "" when absent ("This ZooKeeper instance is not currently serving requests").
std::string parse_mode(std::string_view text);

// Session ids as ZooKeeper prints them: "0x1000006591d0000". Returns std::nullopt when `text` is
// not "0x" followed by 1-16 hex digits. The 64 bits are returned as the signed value the C client
// reports in clientid_t::client_id.
std::optional<int64_t> parse_session_id(std::string_view text);

// The other way round: "0x" and the 64 bits in lower-case hex, as ZooKeeper (and `zklock`) print
// a session id.
std::string format_session_id(int64_t session_id);

// `wchc`: watched paths by session. Text: a "0x<session>" line followed by one "\t<path>" line per
// watched path, per session.
using WatchesBySession = std::map<int64_t, std::vector<std::string>>;
WatchesBySession parse_wchc(std::string_view text);

// `wchp`: watching sessions by path. Text: a "<path>" line followed by one "\t0x<session>" line per
// watching session, per path.
using WatchesByPath = std::map<std::string, std::vector<int64_t>>;
WatchesByPath parse_wchp(std::string_view text);

// `dump`: ephemeral nodes by owner session, from the "Sessions with Ephemerals (N):" section
// ("0x<session>:" line, then one "\t<path>" line per ephemeral). The session-expiry and
// connection sections are ignored. On a follower this section lists only part of the ensemble's
// ephemerals: query the leader (or a standalone server) for the full picture.
using EphemeralsBySession = std::map<int64_t, std::vector<std::string>>;
EphemeralsBySession parse_dump_ephemerals(std::string_view text);

// ---- Convenience queries against a live server (2 s timeout each). ----

// An integer `mntr` value such as "zk_watch_count" or "zk_ephemerals_count"; std::nullopt when the
// server is unreachable or the key is missing or not an integer.
std::optional<int64_t> mntr_value(int port, const std::string& key);

// mntr's zk_watch_count: the number of (path, session) watch registrations; -1 when unreachable.
int64_t watch_count(int port);

// All paths that have at least one watch (from `wchp`), sorted; empty when unreachable.
std::vector<std::string> watched_paths(int port);

// All ephemeral paths (from `dump`), sorted; empty when unreachable. Complete only on a leader or
// standalone server (see parse_dump_ephemerals).
std::vector<std::string> ephemeral_paths(int port);

}  // namespace zklock::testing
