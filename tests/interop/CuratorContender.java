// Interop contender: Apache Curator's InterProcessMutex, either side of its
// InterProcessReadWriteLock, or a participant of its LeaderSelector or LeaderLatch election, on a
// path that zklock and kazoo contenders share
// (tests/interop/interop_test.cpp and shared_interop_test.cpp start it as a child process).
//
// usage: java CuratorContender CONNECT LOCK_PATH ITERATIONS LOGFILE NAME [HOLD_MS] [options]
//   options: --queue-once          exactly one acquisition (ITERATIONS is ignored)
//            --start-file PATH     after connecting, wait until PATH exists before the first acquire
//            --hold-until PATH     inside the lock, hold until PATH exists (instead of HOLD_MS)
//            --mode mutex|read|write|selector|latch  InterProcessMutex (the default), the read or
//                                  the write lock of an InterProcessReadWriteLock (its node data
//                                  is NAME too), or leadership: a LeaderSelector (id NAME, one
//                                  takeLeadership() per iteration, requeued) or a LeaderLatch (id
//                                  NAME, started and closed once per iteration); "inside the
//                                  lock" is then "while leading"
//            --revocable           the mutex is made revocable: a request prints "revocation
//                                  requested" and ends a --hold-until hold (creates that file)
//            --revoke NODE_PATH    no lock: asks the holder of NODE_PATH to let go with Curator's
//                                  Revoker.attemptRevoke, prints "revoke sent", exits 0
//
// Protocol (the same in kazoo_contender.py and in the test's zklock threads): ITERATIONS times
//   acquire; append "enter NAME <ns>" to LOGFILE; then, as a writer (mutex or write), create
//   LOGFILE.inside exclusively and check that no LOGFILE.reader.* exists; as a reader, create
//   LOGFILE.reader.NAME and check that LOGFILE.inside does not exist (either way round, of a
//   reader and a writer inside at once at least one sees the other's file). Someone inside who
//   must not be: append "VIOLATION NAME", release, exit 3. Hold; delete our file; append
//   "exit NAME <ns>"; release.
// <ns> is System.nanoTime(): the log is ContenderSupport's (comparable times across processes,
// lines never interleaved).
//
// stdout: "ready" once connected (before waiting for the start file), "queued <node name>" each
// time our lock node has been created. The node's data is NAME (the client's default data), so
// the test can also tell our node from the server side.
//
// Exit status: 0 done, 2 usage, 3 mutual exclusion violated, 4 any other failure. SIGTERM closes
// the session first (ContenderSupport), so our node goes at once instead of after the timeout.
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.stream.Stream;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderSelector;
import org.apache.curator.framework.recipes.leader.LeaderSelectorListenerAdapter;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.locks.Revoker;
import org.apache.curator.framework.recipes.locks.StandardLockInternalsDriver;
import org.apache.curator.utils.ZKPaths;

public final class CuratorContender {
  // The stock driver (same node names, same queue order); it only reports the node it created,
  // which InterProcessMutex does not expose before acquire() returns.
  static final class ReportingDriver extends StandardLockInternalsDriver {
    @Override
    public String createsTheLock(CuratorFramework client, String path, byte[] lockNodeBytes) throws Exception {
      String ourPath = super.createsTheLock(client, path, lockNodeBytes);
      ContenderSupport.say("queued " + ZKPaths.getNodeFromPath(ourPath));
      return ourPath;
    }
  }

  // True if any reader's marker (LOGFILE.reader.*) exists.
  private static boolean readersInside(Path logPath, String readerPrefix) throws IOException {
    try (Stream<Path> files = Files.list(logPath.getParent())) {
      return files.anyMatch(p -> p.getFileName().toString().startsWith(readerPrefix));
    }
  }

  interface Critical {
    int run() throws Exception;
  }

  // LeaderSelector: each takeLeadership() is one term (one iteration); requeued until done.
  private static int leadWithSelector(ContenderSupport support, String path, String name,
                                      int iterations, Critical critical) throws Exception {
    final CountDownLatch done = new CountDownLatch(1);
    final AtomicInteger terms = new AtomicInteger();
    final AtomicInteger outcome = new AtomicInteger();
    LeaderSelector selector = new LeaderSelector(support.client, path,
        new LeaderSelectorListenerAdapter() {
          @Override
          public void takeLeadership(CuratorFramework client) throws Exception {
            int code;
            try {
              code = critical.run();
            } catch (Exception e) {
              code = ContenderSupport.failed("CuratorContender", e);
            }
            if (code != 0) outcome.compareAndSet(0, code);
            if (code != 0 || terms.incrementAndGet() == iterations) done.countDown();
          }
        });
    selector.setId(name);
    selector.autoRequeue();
    selector.start();
    ContenderSupport.say("queued selector");
    done.await();
    selector.close();
    return outcome.get();
  }

  // LeaderLatch: one latch per term: start, await leadership, the critical section, close.
  private static int leadWithLatch(ContenderSupport support, String path, String name,
                                   int iterations, Critical critical) throws Exception {
    for (int k = 0; k < iterations; k++) {
      LeaderLatch latch = new LeaderLatch(support.client, path, name);
      latch.start();
      latch.await();
      try {
        final int code = critical.run();
        if (code != 0) return code;
      } finally {
        latch.close();
      }
    }
    return 0;
  }

  public static void main(String[] args) {
    System.exit(run(args));
  }

  private static int run(String[] args) {
    if (args.length < 5) {
      System.err.println("usage: CuratorContender CONNECT LOCK_PATH ITERATIONS LOGFILE NAME [HOLD_MS] "
          + "[--queue-once] [--start-file PATH] [--hold-until PATH] [--mode mutex|read|write]");
      return 2;
    }
    final String connect = args[0], lockPath = args[1], logFile = args[3], name = args[4];
    int iterations;
    long holdMs = 0;
    Path startFile = null, holdUntil = null;
    String mode = "mutex", revokeNode = null;
    boolean revocable = false;
    try {
      iterations = Integer.parseInt(args[2]);
      int i = 5;
      if (i < args.length && !args[i].startsWith("--")) holdMs = Long.parseLong(args[i++]);
      for (; i < args.length; i++) {
        switch (args[i]) {
          case "--queue-once": iterations = 1; break;
          case "--start-file": startFile = Paths.get(args[++i]); break;
          case "--hold-until": holdUntil = Paths.get(args[++i]); break;
          case "--mode": mode = args[++i]; break;
          case "--revocable": revocable = true; break;
          case "--revoke": revokeNode = args[++i]; break;
          default: throw new IllegalArgumentException("unknown option " + args[i]);
        }
      }
    } catch (RuntimeException e) {
      System.err.println("CuratorContender: bad arguments: " + e);
      return 2;
    }
    if (!mode.equals("mutex") && !mode.equals("read") && !mode.equals("write")
        && !mode.equals("selector") && !mode.equals("latch")) {
      System.err.println("CuratorContender: bad --mode " + mode);
      return 2;
    }
    final boolean reader = mode.equals("read");
    final Path writerMarker = Paths.get(logFile + ".inside");
    final Path logPath = Paths.get(logFile).toAbsolutePath();
    final String readerPrefix = logPath.getFileName() + ".reader.";
    final Path marker = reader ? logPath.resolveSibling(readerPrefix + name) : writerMarker;

    final byte[] data = name.getBytes(StandardCharsets.UTF_8);  // our lock node's data
    try (ContenderSupport support = new ContenderSupport(connect, logFile, data)) {
      support.connect();
      if (startFile != null) ContenderSupport.awaitFile(startFile, "start file");
      if (revokeNode != null) {
        Revoker.attemptRevoke(support.client, revokeNode);
        ContenderSupport.say("revoke sent");
        return 0;
      }
      final long hold = holdMs;
      final Path until = holdUntil;
      if (mode.equals("selector") || mode.equals("latch")) {
        // One critical section per term; its outcome: 0 fine, 3 violated.
        final Critical critical = () -> {
          support.event("enter", name);
          boolean violated;
          try {
            Files.createFile(marker);
            violated = readersInside(logPath, readerPrefix);
          } catch (FileAlreadyExistsException e) {
            violated = true;
          }
          if (violated) {
            support.event("VIOLATION", name);
            return 3;
          }
          ContenderSupport.hold(until, hold);
          Files.delete(marker);
          support.event("exit", name);
          return 0;
        };
        return mode.equals("selector")
            ? leadWithSelector(support, lockPath, name, iterations, critical)
            : leadWithLatch(support, lockPath, name, iterations, critical);
      }
      InterProcessMutex mutex;
      if (mode.equals("mutex")) {
        mutex = new InterProcessMutex(support.client, lockPath, new ReportingDriver());
        if (revocable) {
          final Path released = holdUntil;
          mutex.makeRevocable(m -> {
            ContenderSupport.say("revocation requested");
            try {
              if (released != null) Files.createFile(released);
            } catch (IOException e) {
              // already there: the hold ends anyway
            }
          });
        }
      } else {
        // Its drivers are internal: no "queued" line (the test watches the server instead).
        InterProcessReadWriteLock rw =
            new InterProcessReadWriteLock(support.client, lockPath, data);
        mutex = reader ? rw.readLock() : rw.writeLock();
      }
      for (int k = 0; k < iterations; k++) {
        mutex.acquire();
        try {
          support.event("enter", name);
          boolean violated;
          try {
            Files.createFile(marker);  // O_CREAT|O_EXCL: fails if another writer is inside
            violated = reader ? Files.exists(writerMarker) : readersInside(logPath, readerPrefix);
          } catch (FileAlreadyExistsException e) {
            violated = true;
          }
          if (violated) {
            support.event("VIOLATION", name);
            return 3;
          }
          ContenderSupport.hold(holdUntil, holdMs);
          Files.delete(marker);
          support.event("exit", name);
        } finally {
          mutex.release();
        }
      }
      return 0;
    } catch (Exception e) {
      return ContenderSupport.failed("CuratorContender", e);
    }
  }
}
