#!/usr/bin/python3
"""Interop contender: python kazoo's Lock, ReadLock or WriteLock on a lock path shared with zklock
and Curator.

tests/interop/interop_test.cpp and shared_interop_test.cpp start it as a child process (with a
python3 that can import kazoo: Debian's python3-kazoo lives in /usr/bin/python3's dist-packages).

usage: kazoo_contender.py CONNECT LOCK_PATH ITERATIONS LOGFILE NAME [HOLD_MS] [options]
  options: --queue-once          exactly one acquisition (ITERATIONS is ignored)
           --start-file PATH     after connecting, wait until PATH exists before the first acquire
           --hold-until PATH     inside the lock, hold until PATH exists (instead of HOLD_MS)
           --mode lock|read|write|election  Lock (the default), ReadLock, WriteLock, or an
                                 Election participant (its identifier NAME; one run() per
                                 iteration; "inside the lock" is then "while leading")
           --patterns P1,P2,...  the lock's extra_lock_patterns instead of the mode's default
                                 (an empty argument: none)

The default extra_lock_patterns make kazoo see the other libraries' nodes:
  lock   ["-lock-"]: it queues behind zklock's and Curator's "_c_<uuid>-lock-NNNNNNNNNN" nodes.
  write  ["-lock-", "__READ__", "__WRIT__"]: behind every reader and writer of zklock's SharedMutex
         and Curator's InterProcessReadWriteLock too.
  election ["-lock-"]: kazoo's Election is a Lock (client.Lock(path, identifier)) and takes no
         patterns of its own: its lock is replaced by the same Lock with them - the one thing it
         needs to queue behind zklock's and Curator's leaders.
  read   ["-lock-", "__WRIT__", "__rlock__"]: behind their writers. "__rlock__" is kazoo's own
         reader name: kazoo 2.8's ReadLock does not find its own node among its contenders
         without it (python-zk/kazoo#649, fixed by #650) and takes the LAST writer in the queue as
         its predecessor - one queued behind it, which deadlocks with it. With it, the reader
         waits for its nearest earlier writer or kazoo reader: kazoo readers then do not share
         with each other (zklock and Curator readers, "__READ__", still share with them).
Our nodes are "<uuid hex>__lock__NNNNNNNNNN" (Lock, WriteLock) or "<uuid hex>__rlock__NNNNNNNNNN"
(ReadLock), with data NAME (the lock's identifier).

Protocol (the same in CuratorContender.java and in the test's zklock threads): ITERATIONS times
  acquire; append "enter NAME <ns>" to LOGFILE; then, as a writer (lock or write), create
  LOGFILE.inside exclusively and check that no LOGFILE.reader.* exists; as a reader, create
  LOGFILE.reader.NAME and check that LOGFILE.inside does not exist. Someone inside who must not
  be: append "VIOLATION NAME", release, exit 3. Hold; delete our file; append "exit NAME <ns>";
  release.
<ns> is time.monotonic_ns() (CLOCK_MONOTONIC, like the other contenders' clocks). LOGFILE is opened
with O_APPEND and each line is one os.write, so lines from different processes never interleave.

stdout: "ready" once connected (before waiting for the start file), "queued <node name>" each time
our lock node has been created, "predecessor <node name>" each time kazoo chose the node it waits
for (after every wake-up).

Exit status: 0 done, 2 usage, 3 mutual exclusion violated, 4 any other failure. SIGTERM closes the
session first, so our node goes at once instead of after the session timeout.
"""
import os
import signal
import sys
import time

from kazoo.client import KazooClient
from kazoo.recipe.election import Election
from kazoo.recipe.lock import Lock, ReadLock, WriteLock

POLL_S = 0.002            # file waits (start, hold-until) poll at this interval
FILE_WAIT_LIMIT_S = 120   # a forgotten contender gives up instead of running forever


class Reporting:
    """Mixed into kazoo's locks, unchanged, except that it reports its node once created and the
    predecessor kazoo picks.

    kazoo calls _get_predecessor(node) right after creating our node (and after each wake-up);
    the first call for a node is our "queued" moment. If a kazoo version stops calling it, the
    only loss is the stdout lines: the locking itself is kazoo's.
    """

    _reported = None

    def _get_predecessor(self, node):
        if node != self._reported:
            self._reported = node
            print("queued", node, flush=True)
        predecessor = super()._get_predecessor(node)
        if predecessor is not None:
            print("predecessor", predecessor, flush=True)
        return predecessor


class ReportingLock(Reporting, Lock):
    pass


class ReportingReadLock(Reporting, ReadLock):
    pass


class ReportingWriteLock(Reporting, WriteLock):
    pass


MODES = {
    "lock": (ReportingLock, ["-lock-"]),
    "election": (ReportingLock, ["-lock-"]),
    "read": (ReportingReadLock, ["-lock-", "__WRIT__", "__rlock__"]),
    "write": (ReportingWriteLock, ["-lock-", "__READ__", "__WRIT__"]),
}


def wait_for_file(path):
    deadline = time.monotonic() + FILE_WAIT_LIMIT_S
    while not os.path.exists(path):
        if time.monotonic() > deadline:
            return False
        time.sleep(POLL_S)
    return True


def parse(argv):
    if len(argv) < 5:
        raise ValueError("missing arguments")
    opts = {"connect": argv[0], "path": argv[1], "iterations": int(argv[2]), "log": argv[3],
            "name": argv[4], "hold_ms": 0, "start_file": None, "hold_until": None,
            "mode": "lock", "patterns": None}
    rest = argv[5:]
    if rest and not rest[0].startswith("--"):
        opts["hold_ms"] = int(rest.pop(0))
    while rest:
        flag = rest.pop(0)
        if flag == "--queue-once":
            opts["iterations"] = 1
        elif flag == "--start-file":
            opts["start_file"] = rest.pop(0)
        elif flag == "--hold-until":
            opts["hold_until"] = rest.pop(0)
        elif flag == "--mode":
            opts["mode"] = rest.pop(0)
            if opts["mode"] not in MODES:
                raise ValueError("unknown mode " + opts["mode"])
        elif flag == "--patterns":
            opts["patterns"] = [p for p in rest.pop(0).split(",") if p]
        else:
            raise ValueError("unknown option " + flag)
    return opts


def on_sigterm(signum, frame):
    raise SystemExit(128 + signum)  # unwinds through the finally below, which closes the session


def main(argv):
    try:
        o = parse(argv)
    except (ValueError, IndexError) as e:
        print("usage: kazoo_contender.py CONNECT LOCK_PATH ITERATIONS LOGFILE NAME [HOLD_MS] "
              "[--queue-once] [--start-file PATH] [--hold-until PATH] [--mode lock|read|write] "
              "[--patterns P1,P2,...]: %s" % e, file=sys.stderr)
        return 2
    signal.signal(signal.SIGTERM, on_sigterm)
    name, writer_marker = o["name"], o["log"] + ".inside"
    reader = o["mode"] == "read"
    log_dir, log_base = os.path.split(os.path.abspath(o["log"]))
    reader_prefix = log_base + ".reader."
    marker = os.path.join(log_dir, reader_prefix + name) if reader else writer_marker

    def violated():
        if reader:
            return os.path.exists(writer_marker)
        return any(f.startswith(reader_prefix) for f in os.listdir(log_dir))
    log = os.open(o["log"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def append(line):
        os.write(log, (line + "\n").encode())

    zk = KazooClient(hosts=o["connect"], timeout=6.0)
    try:
        zk.start(timeout=30)
        print("ready", flush=True)
        if o["start_file"] and not wait_for_file(o["start_file"]):
            print("kazoo_contender: start file never appeared: " + o["start_file"], file=sys.stderr)
            return 4
        lock_class, patterns = MODES[o["mode"]]
        if o["patterns"] is not None:
            patterns = o["patterns"]
        lock = lock_class(zk, o["path"], name, extra_lock_patterns=patterns)

        def critical():
            """The critical section; returns 0, or the exit status to end with."""
            append("enter %s %d" % (name, time.monotonic_ns()))
            try:
                os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
                bad = violated()
            except FileExistsError:
                bad = True
            if bad:
                append("VIOLATION %s %d" % (name, time.monotonic_ns()))
                return 3
            if o["hold_until"]:
                if not wait_for_file(o["hold_until"]):
                    print("kazoo_contender: hold-until file never appeared: " + o["hold_until"],
                          file=sys.stderr)
                    return 4
            elif o["hold_ms"] > 0:
                time.sleep(o["hold_ms"] / 1000.0)  # the critical section's work, not synchronisation
            os.unlink(marker)
            append("exit %s %d" % (name, time.monotonic_ns()))
            return 0

        if o["mode"] == "election":
            election = Election(zk, o["path"], name)
            election.lock = lock  # the same Lock, with the patterns (see above)
            for _ in range(o["iterations"]):
                outcome = []
                election.run(lambda: outcome.append(critical()))
                if outcome and outcome[0] != 0:
                    return outcome[0]
            return 0
        for _ in range(o["iterations"]):
            lock.acquire()
            try:
                code = critical()
                if code != 0:
                    return code
            finally:
                lock.release()
        return 0
    except SystemExit:
        raise
    except Exception as e:  # noqa: BLE001 - any failure is exit 4 with its text on stderr
        print("kazoo_contender: %r" % (e,), file=sys.stderr)
        return 4
    finally:
        try:
            zk.stop()
            zk.close()
        finally:
            os.close(log)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
