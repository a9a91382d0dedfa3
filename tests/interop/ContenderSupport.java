// What the Curator contender programs share (CuratorContender, CuratorSemaphoreContender; compiled
// with them by tests/interop/tests.cmake): the Curator session, the event log, and the waits on
// files - the parts of their protocol that do not depend on the recipe.
//
// What it guarantees:
//   - the session: 6 s session timeout, 5 s connection timeout, 3 retries 100 ms apart. A JVM
//     shutdown hook closes it (SIGTERM, ChildProcess::stop), so that the contender's nodes go at
//     once instead of after the session timeout; close() does the same on a normal end, once.
//   - connect() prints "ready" once connected, or fails.
//   - event(WHAT, NAME) appends "WHAT NAME <ns>" to LOGFILE, <ns> being System.nanoTime() -
//     CLOCK_MONOTONIC on Linux like the other contenders' clocks, so the log's timestamps are
//     comparable across processes. LOGFILE is opened with O_APPEND and every line is one
//     write(2), so lines from different processes never interleave.
//   - a wait on a file gives up after FILE_WAIT_LIMIT_MS, so that a contender the test forgot (it
//     died without killing it) does not run forever.
//   - failed(PROGRAM, e) reports a failure on stderr, "PROGRAM: ..." (with the stack trace unless
//     it is a Failure, which says it all), and returns the exit status for it: 4.
import java.io.FileOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;

final class ContenderSupport implements AutoCloseable {
  static final int EXIT_FAILURE = 4;
  private static final long POLL_MS = 2;
  private static final long FILE_WAIT_LIMIT_MS = 120_000;

  // A failure the contender explains in one line (no stack trace).
  static final class Failure extends Exception {
    Failure(String message) {
      super(message);
    }
  }

  final CuratorFramework client;
  private final String connect;
  private final FileOutputStream log;
  private final AtomicBoolean closed = new AtomicBoolean(false);

  // Opens LOGFILE for appending and builds the client; `defaultData` is the data of the nodes it
  // creates (null: Curator's default).
  ContenderSupport(String connect, String logFile, byte[] defaultData) throws IOException {
    this.connect = connect;
    log = new FileOutputStream(logFile, true);
    CuratorFrameworkFactory.Builder builder = CuratorFrameworkFactory.builder()
        .connectString(connect)
        .sessionTimeoutMs(6000)
        .connectionTimeoutMs(5000)
        .retryPolicy(new RetryNTimes(3, 100));
    if (defaultData != null) builder.defaultData(defaultData);
    client = builder.build();
    Runtime.getRuntime().addShutdownHook(new Thread(this::close));
  }

  void connect() throws Failure, InterruptedException {
    client.start();
    if (!client.blockUntilConnected(30, TimeUnit.SECONDS)) {
      throw new Failure("not connected to " + connect);
    }
    say("ready");
  }

  // A line on stdout, flushed at once (the test reads it while we run).
  static void say(String line) {
    System.out.println(line);
    System.out.flush();
  }

  void event(String what, String name) throws IOException {
    String line = what + " " + name + " " + System.nanoTime() + "\n";
    log.write(line.getBytes(StandardCharsets.UTF_8));  // one write(2) on an O_APPEND fd
  }

  // Waits until `path` exists; `what` names it in the failure.
  static void awaitFile(Path path, String what) throws Failure, InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(FILE_WAIT_LIMIT_MS);
    while (!Files.exists(path)) {
      if (System.nanoTime() > deadline) throw new Failure(what + " never appeared: " + path);
      Thread.sleep(POLL_MS);
    }
  }

  // Inside the lock: holds until `holdUntil` exists when it is given, else for holdMs (the
  // critical section's work, not synchronisation).
  static void hold(Path holdUntil, long holdMs) throws Failure, InterruptedException {
    if (holdUntil != null) {
      awaitFile(holdUntil, "hold-until file");
    } else if (holdMs > 0) {
      Thread.sleep(holdMs);
    }
  }

  static int failed(String program, Exception e) {
    System.err.println(program + ": " + (e instanceof Failure ? e.getMessage() : e));
    if (!(e instanceof Failure)) e.printStackTrace();
    return EXIT_FAILURE;
  }

  @Override
  public void close() {
    if (closed.compareAndSet(false, true)) client.close();
  }
}
