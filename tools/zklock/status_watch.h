// `zklock status --watch [--interval DURATION] LOCK_PATH`: the lock's queue, refreshed in place
// until interrupted - `watch zklock status` without a new session (and a new process) each time.
//
// The public Session API has no child watches, so the queue is read every interval (never more
// often: each read starts at least one interval after the one before).
#pragma once

#include "console.h"
#include "options.h"
#include "signals.h"
#include "status_command.h"

namespace zklock::cli {

/// Runs the watch: shows the queue (watch_view.h) every `status.interval`, on a terminal in place
/// (the screen cleared, the cursor hidden), elsewhere as blocks separated by a blank line. A
/// missing path or a failed read is shown and the watch goes on. Ends on SIGINT, SIGTERM or SIGHUP
/// (read from `signals`, which main() creates before the session's threads exist): the cursor is
/// shown again, the session closed. Returns: 0 then.
/// Throws: Failure(69) when no server answers at the start; InvalidArgumentError for a bad lock
///   path; NotAuthorizedError when the path may not be read (main() turns them into exit codes).
int run_status_watch(const StatusOptions& status, const CommonOptions& common,
                     const Console& console, SignalReader& signals);

}  // namespace zklock::cli
