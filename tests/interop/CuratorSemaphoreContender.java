// Interop contender: Apache Curator's InterProcessSemaphoreV2 on a semaphore path that zklock's
// Semaphore shares (tests/interop/semaphore_interop_test.cpp starts it as a child process).
//
// usage: java CuratorSemaphoreContender CONNECT PATH MAX_LEASES ITERATIONS LOGFILE NAME HOLD_MS
//             [--hold-until PATH]
//   ITERATIONS times: acquire a lease; append "enter NAME <ns>" to LOGFILE; print "held"; hold
//   HOLD_MS (or, with --hold-until, until PATH exists); append "exit NAME <ns>"; close the lease.
// <ns> is System.nanoTime(), CLOCK_MONOTONIC on Linux like zklock's steady_clock: the log is
// ContenderSupport's (comparable times across processes, lines never interleaved). stdout:
// "ready" once connected, "held" after each acquire.
//
// Exit status: 0 done, 2 usage, 4 any failure. SIGTERM closes the session first (ContenderSupport).
import java.nio.file.Path;
import java.nio.file.Paths;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;

public final class CuratorSemaphoreContender {
  public static void main(String[] args) {
    System.exit(run(args));
  }

  private static int run(String[] args) {
    if (args.length < 7) {
      System.err.println("usage: CuratorSemaphoreContender CONNECT PATH MAX_LEASES ITERATIONS "
          + "LOGFILE NAME HOLD_MS [--hold-until PATH]");
      return 2;
    }
    final String connect = args[0], path = args[1], logFile = args[4], name = args[5];
    final int maxLeases, iterations;
    final long holdMs;
    Path holdUntil = null;
    try {
      maxLeases = Integer.parseInt(args[2]);
      iterations = Integer.parseInt(args[3]);
      holdMs = Long.parseLong(args[6]);
      for (int i = 7; i < args.length; i++) {
        if (args[i].equals("--hold-until")) {
          holdUntil = Paths.get(args[++i]);
        } else {
          throw new IllegalArgumentException("unknown option " + args[i]);
        }
      }
    } catch (RuntimeException e) {
      System.err.println("CuratorSemaphoreContender: bad arguments: " + e);
      return 2;
    }
    try (ContenderSupport support = new ContenderSupport(connect, logFile, null)) {
      support.connect();
      InterProcessSemaphoreV2 semaphore =
          new InterProcessSemaphoreV2(support.client, path, maxLeases);
      for (int k = 0; k < iterations; k++) {
        Lease lease = semaphore.acquire();
        try {
          support.event("enter", name);
          ContenderSupport.say("held");
          ContenderSupport.hold(holdUntil, holdMs);
          support.event("exit", name);
        } finally {
          semaphore.returnLease(lease);
        }
      }
      return 0;
    } catch (Exception e) {
      return ContenderSupport.failed("CuratorSemaphoreContender", e);
    }
  }
}
