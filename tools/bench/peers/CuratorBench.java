// Peer benchmark: Apache Curator's InterProcessMutex, same workload as zklock-bench.
// Derived from the shared peer set (shared/peers/CuratorBench.java): identical workload and keys,
// plus handoff_p50_us / handoff_p99_us / handoffs measured exactly as zklock-bench does (the
// releasing thread stores the time just before release(); a waiter whose acquire() call started
// before that time counts acquire-return minus that time).
// Also cpu_us_per_acq (the process's CPU time over the timed part, per acquisition, as
// zklock-bench counts it) and a drain mode: CLIENTS threads of ONE CuratorFramework, each with an
// InterProcessMutex on one path, queue behind the main thread's hold and drain (CURATOR-716's
// setting), with drain_seconds, drain_us_per_waiter, cpu_us_per_waiter_drain and
// queue_build_seconds as zklock-bench's drain mode.
// And a fleet mode, zklock-bench --mode fleet's: one process of a fleet, CLIENTS sessions (a
// CuratorFramework each, a thread each) loop for SECONDS taking and releasing an InterProcessMutex
// picked at random, each time, among LOCKS paths under BASE, which every process of the fleet is
// given; GATE_DIR: write GATE_DIR/ready-<pid> once connected and start when GATE_DIR/go exists;
// LATENCY_FILE: every wait in microseconds, one per line (scripts/bench_fleet.sh).
// usage: java CuratorBench HOSTS MODE CLIENTS ITERS   (prints one JSON line)
//        java CuratorBench HOSTS fleet CLIENTS SECONDS LOCKS BASE [GATE_DIR|- [LATENCY_FILE]]
import java.nio.file.*;
import java.util.*;
import java.util.concurrent.*;
import java.util.concurrent.atomic.*;
import org.apache.curator.framework.*;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.RetryNTimes;

public class CuratorBench {
  // The whole process's CPU time (all threads), in microseconds.
  static double cpuMicros() {
    return ((com.sun.management.OperatingSystemMXBean)
                java.lang.management.ManagementFactory.getOperatingSystemMXBean())
               .getProcessCpuTime() / 1e3;
  }

  static void drain(String hosts, int n) throws Exception {
    String path = "/bench/curator-drain-" + UUID.randomUUID().toString().substring(0, 8);
    CuratorFramework cf = CuratorFrameworkFactory.newClient(hosts, 10000, 5000, new RetryNTimes(3, 100));
    cf.start();
    cf.blockUntilConnected();
    InterProcessMutex holder = new InterProcessMutex(cf, path);
    holder.acquire();
    CountDownLatch done = new CountDownLatch(n);
    AtomicInteger inside = new AtomicInteger(), overlaps = new AtomicInteger(), failures = new AtomicInteger();
    long build0 = System.nanoTime();
    double cpuBuild0 = cpuMicros();
    List<Thread> threads = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      Thread t = new Thread(() -> {
        try {
          InterProcessMutex m = new InterProcessMutex(cf, path);
          m.acquire();
          if (inside.incrementAndGet() != 1) overlaps.incrementAndGet();
          inside.decrementAndGet();
          m.release();
        } catch (Exception e) {
          failures.incrementAndGet();
        }
        done.countDown();
      });
      t.start();
      threads.add(t);
    }
    while (cf.checkExists().forPath(path).getNumChildren() < n + 1) Thread.sleep(20);
    double build = (System.nanoTime() - build0) / 1e9, cpuBuild = cpuMicros() - cpuBuild0;
    double cpu0 = cpuMicros();
    long t0 = System.nanoTime();
    holder.release();
    done.await();
    double secs = (System.nanoTime() - t0) / 1e9, cpu = cpuMicros() - cpu0;
    for (Thread t : threads) t.join();
    if (failures.get() != 0) throw new RuntimeException(failures.get() + " waiters failed");
    System.out.printf(Locale.ROOT,
        "{\"impl\": \"curator\", \"mode\": \"drain\", \"clients\": %d, \"iters\": 1, \"seconds\": %.4f, \"ops_per_s\": %.1f, \"overlaps\": %d, \"queue_build_seconds\": %.3f, \"drain_seconds\": %.3f, \"drain_us_per_waiter\": %.1f, \"cpu_us_per_waiter_drain\": %.1f, \"cpu_us_per_waiter_build\": %.1f}%n",
        n, secs, n / secs, overlaps.get(), build, secs, secs * 1e6 / n, cpu / n, cpuBuild / n);
    cf.delete().deletingChildrenIfNeeded().forPath(path);
    cf.close();
  }
  // n clients (a session each), connected: 10 s sessions, as zklock-bench's.
  static List<CuratorFramework> connect(String hosts, int n) throws InterruptedException {
    List<CuratorFramework> cfs = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      CuratorFramework cf = CuratorFrameworkFactory.newClient(hosts, 10000, 5000, new RetryNTimes(3, 100));
      cf.start();
      cf.blockUntilConnected();
      cfs.add(cf);
    }
    return cfs;
  }
  static void fleet(String hosts, int n, int seconds, int locks, String base, String gate,
                    String latencyFile) throws Exception {
    List<CuratorFramework> cfs = connect(hosts, n);
    // The lock paths exist beforehand (untimed), as in zklock-bench's fleet mode.
    String[] paths = new String[locks];
    for (int k = 0; k < locks; k++) {
      paths[k] = base + String.format(Locale.ROOT, "/lock-%03d", k);
      try {
        cfs.get(0).create().creatingParentsIfNeeded().forPath(paths[k]);
      } catch (org.apache.zookeeper.KeeperException.NodeExistsException e) {
        // another process of the fleet made it
      }
    }
    AtomicInteger[] inside = new AtomicInteger[locks];
    for (int k = 0; k < locks; k++) inside[k] = new AtomicInteger();
    AtomicInteger overlaps = new AtomicInteger(), errors = new AtomicInteger();
    AtomicReference<String> firstError = new AtomicReference<>();
    List<Long> lat = Collections.synchronizedList(new ArrayList<>());
    CountDownLatch start = new CountDownLatch(1);
    AtomicLong deadline = new AtomicLong();
    List<Thread> threads = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      InterProcessMutex[] mine = new InterProcessMutex[locks];
      for (int k = 0; k < locks; k++) mine[k] = new InterProcessMutex(cfs.get(i), paths[k]);
      final long seed = ProcessHandle.current().pid() * 7919L + i;
      Thread t = new Thread(() -> {
        Random pick = new Random(seed);
        List<Long> waits = new ArrayList<>();
        try {
          start.await();
          long end = deadline.get();
          while (System.nanoTime() - end < 0) {
            int k = pick.nextInt(locks);
            long t0 = System.nanoTime();
            mine[k].acquire();
            waits.add(System.nanoTime() - t0);
            if (inside[k].incrementAndGet() != 1) overlaps.incrementAndGet();
            inside[k].decrementAndGet();
            mine[k].release();
          }
        } catch (Exception e) {
          // As zklock-bench: a failed acquire ends this session's loop and is counted.
          errors.incrementAndGet();
          firstError.compareAndSet(null, e.toString());
        }
        lat.addAll(waits);
      });
      t.start();
      threads.add(t);
    }
    double gateWait = 0;
    if (gate != null) {
      Files.createFile(Paths.get(gate, "ready-" + ProcessHandle.current().pid()));
      long w0 = System.nanoTime();
      Path go = Paths.get(gate, "go");
      while (!Files.exists(go)) {
        if (System.nanoTime() - w0 > 600_000_000_000L) throw new RuntimeException("no go in 600 s");
        Thread.sleep(1);
      }
      gateWait = (System.nanoTime() - w0) / 1e9;
    }
    double cpu0 = cpuMicros();
    long t0 = System.nanoTime();
    deadline.set(t0 + seconds * 1_000_000_000L);
    start.countDown();
    for (Thread t : threads) t.join();
    double secs = (System.nanoTime() - t0) / 1e9, cpu = cpuMicros() - cpu0;
    List<Long> s = new ArrayList<>(lat);
    Collections.sort(s);
    if (latencyFile != null) {
      StringBuilder b = new StringBuilder();
      for (long v : s) b.append(v / 1000).append('\n');
      Files.writeString(Paths.get(latencyFile), b);
    }
    int total = s.size();
    System.out.printf(Locale.ROOT,
        "{\"impl\": \"curator\", \"mode\": \"fleet\", \"clients\": %d, \"iters\": %d, \"seconds\": %.4f, \"ops_per_s\": %.1f, \"p50_us\": %s, \"p99_us\": %s, \"overlaps\": %d, \"locks\": %d, \"acquisitions\": %d, \"cpu_us\": %.0f, \"cpu_us_per_acq\": %.1f, \"gate_wait_s\": %.3f, \"errors\": %d%s}%n",
        n, total / n, secs, total / secs, pct(s, 0.5), pct(s, 0.99), overlaps.get(), locks, total, cpu,
        total > 0 ? cpu / total : 0.0, gateWait, errors.get(),
        firstError.get() == null ? "" : ", \"first_error\": \"" + firstError.get().replace("\\", "").replace("\"", "'") + "\"");
    for (CuratorFramework cf : cfs) cf.close();
  }

  static String pct(List<Long> s, double q) {
    if (s.isEmpty()) return "null";
    return String.format(Locale.ROOT, "%.1f", s.get((int) (s.size() * q)) / 1e3);
  }

  public static void main(String[] a) throws Exception {
    String hosts = a[0], mode = a[1];
    int clients = Integer.parseInt(a[2]), iters = Integer.parseInt(a[3]);
    if (mode.equals("drain")) {
      drain(hosts, clients);
      return;
    }
    if (mode.equals("fleet")) {
      String gate = a.length > 6 && !a[6].equals("-") ? a[6] : null;
      fleet(hosts, clients, iters, Integer.parseInt(a[4]), a[5], gate, a.length > 7 ? a[7] : null);
      return;
    }
    int n = mode.equals("uncontended") ? 1 : clients;
    String path = "/bench/curator-" + UUID.randomUUID().toString().substring(0, 8);
    List<CuratorFramework> cfs = connect(hosts, n);
    AtomicInteger inside = new AtomicInteger(), overlaps = new AtomicInteger();
    AtomicLong lastUnlock = new AtomicLong(Long.MIN_VALUE);
    CyclicBarrier gate = new CyclicBarrier(n + 1);
    List<Long> lat = Collections.synchronizedList(new ArrayList<>());
    List<Long> hand = Collections.synchronizedList(new ArrayList<>());
    List<Thread> threads = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      InterProcessMutex m = new InterProcessMutex(cfs.get(i), path);
      Thread t = new Thread(() -> {
        try {
          long[] mine = new long[iters];
          List<Long> myHand = new ArrayList<>();
          gate.await();
          for (int k = 0; k < iters; k++) {
            long t0 = System.nanoTime();
            m.acquire();
            long t1 = System.nanoTime();
            mine[k] = t1 - t0;
            long rel = lastUnlock.get();
            if (rel != Long.MIN_VALUE && t0 - rel < 0) myHand.add(t1 - rel);
            if (inside.incrementAndGet() != 1) overlaps.incrementAndGet();
            inside.decrementAndGet();
            lastUnlock.set(System.nanoTime());
            m.release();
          }
          for (long v : mine) lat.add(v);
          hand.addAll(myHand);
        } catch (Exception e) { throw new RuntimeException(e); }
      });
      t.start();
      threads.add(t);
    }
    double cpu0 = cpuMicros();
    gate.await();
    long t0 = System.nanoTime();
    for (Thread t : threads) t.join();
    double secs = (System.nanoTime() - t0) / 1e9;
    double cpu = cpuMicros() - cpu0;
    List<Long> s = new ArrayList<>(lat);
    Collections.sort(s);
    List<Long> h = new ArrayList<>(hand);
    Collections.sort(h);
    int total = n * iters;
    System.out.printf(Locale.ROOT,
        "{\"impl\": \"curator\", \"mode\": \"%s\", \"clients\": %d, \"iters\": %d, \"seconds\": %.4f, \"ops_per_s\": %.1f, \"p50_us\": %.1f, \"p99_us\": %.1f, \"overlaps\": %d, \"handoff_p50_us\": %s, \"handoff_p99_us\": %s, \"handoffs\": %d, \"cpu_us_per_acq\": %.1f}%n",
        mode, n, iters, secs, total / secs, s.get(s.size() / 2) / 1e3, s.get((int) (s.size() * 0.99)) / 1e3, overlaps.get(),
        pct(h, 0.5), pct(h, 0.99), h.size(), cpu / total);
    for (CuratorFramework cf : cfs) cf.close();
  }
}
