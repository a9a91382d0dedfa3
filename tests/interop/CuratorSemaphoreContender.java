// Interop contender: Apache Curator's InterProcessSemaphoreV2 on a semaphore path that zklock's
// Semaphore shares (tests/interop/semaphore_interop_test.cpp starts it as a child process).
//
// usage: java CuratorSemaphoreContender CONNECT PATH MAX_LEASES ITERATIONS LOGFILE NAME HOLD_MS
//             [--hold-until PATH]
//   ITERATIONS times: acquire a lease; append "enter NAME <ns>" to LOGFILE; print "held"; hold
//   HOLD_MS (or, with --hold-until, until PATH exists); append "exit NAME <ns>"; close the lease.
// <ns> is System.nanoTime(), CLOCK_MONOTONIC on Linux like zklock's steady_clock, so the log's
// timestamps are comparable across processes. LOGFILE is opened with O_APPEND and every line is
// one write(2). stdout: "ready" once connected, "held" after each acquire.
//
// Exit status: 0 done, 2 usage, 4 any failure. SIGTERM closes the session first (a shutdown hook).
import java.io.FileOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.curator.retry.RetryNTimes;

public final class CuratorSemaphoreContender {
  private static final long POLL_MS = 2;
  private static final long FILE_WAIT_LIMIT_MS = 120_000;

  private static FileOutputStream log;

  private static void append(String line) throws IOException {
    log.write((line + "\n").getBytes(StandardCharsets.UTF_8));  // one write(2) on an O_APPEND fd
  }

  private static boolean waitForFile(Path path) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(FILE_WAIT_LIMIT_MS);
    while (!Files.exists(path)) {
      if (System.nanoTime() > deadline) return false;
      Thread.sleep(POLL_MS);
    }
    return true;
  }

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
    final CuratorFramework client = CuratorFrameworkFactory.builder()
        .connectString(connect)
        .sessionTimeoutMs(6000)
        .connectionTimeoutMs(5000)
        .retryPolicy(new RetryNTimes(3, 100))
        .build();
    final AtomicBoolean closed = new AtomicBoolean(false);
    Runnable close = () -> {
      if (closed.compareAndSet(false, true)) client.close();
    };
    Runtime.getRuntime().addShutdownHook(new Thread(close));
    try {
      log = new FileOutputStream(logFile, true);
      client.start();
      if (!client.blockUntilConnected(30, TimeUnit.SECONDS)) {
        System.err.println("CuratorSemaphoreContender: not connected to " + connect);
        return 4;
      }
      System.out.println("ready");
      System.out.flush();
      InterProcessSemaphoreV2 semaphore = new InterProcessSemaphoreV2(client, path, maxLeases);
      for (int k = 0; k < iterations; k++) {
        Lease lease = semaphore.acquire();
        try {
          append("enter " + name + " " + System.nanoTime());
          System.out.println("held");
          System.out.flush();
          if (holdUntil != null) {
            if (!waitForFile(holdUntil)) {
              System.err.println("CuratorSemaphoreContender: hold-until file never appeared");
              return 4;
            }
          } else if (holdMs > 0) {
            Thread.sleep(holdMs);  // the work, not synchronisation
          }
          append("exit " + name + " " + System.nanoTime());
        } finally {
          semaphore.returnLease(lease);
        }
      }
      return 0;
    } catch (Exception e) {
      System.err.println("CuratorSemaphoreContender: " + e);
      e.printStackTrace();
      return 4;
    } finally {
      close.run();
    }
  }
}
