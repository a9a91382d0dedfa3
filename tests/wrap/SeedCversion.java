// Seeds a ZooKeeper 3.8 data directory with a snapshot in which chosen nodes have a chosen child
// version (cversion), so that their next sequential child is numbered near the signed 32-bit wrap
// without creating 2^31 children. Used by tests/wrap/wrap_test.cpp.
//
// usage: java SeedCversion DATA_DIR ZXID PATH=CVERSION [PATH=CVERSION...]
//
// Writes DATA_DIR/version-2/snapshot.<ZXID hex> (the layout of zoo.cfg's dataDir without a
// separate dataLogDir) holding: the system nodes every DataTree has (/zookeeper...), each PATH and
// its missing ancestors as persistent nodes, and no sessions. A server started on DATA_DIR loads
// the newest snapshot, so run this on an empty version-2 (or with a ZXID above every zxid already
// there). ZXID must be larger than the number of nodes created here (each gets its own zxid).
//
// How a node gets its cversion: the server names a sequential child after the parent's
// stat.cversion (PrepRequestProcessor: String.format("%010d", cversion)). The tree is built only
// through DataTree's own API, as transactions would: createNode(child, parentCVersion=N) sets the
// parent's cversion to N (createNode only ever raises it), and deleteNode removes the helper child
// again without touching cversion. So the tree digest that 3.8 writes into the snapshot (and checks
// on load) matches the tree - setting DataNode.stat directly would not update it.
//
// Exit status: 0 written, 2 usage, 1 any failure (message on stderr).
import java.io.File;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.server.DataNode;
import org.apache.zookeeper.server.DataTree;
import org.apache.zookeeper.server.persistence.FileTxnSnapLog;

public final class SeedCversion {
  private static final String HELPER_CHILD = "seed-cversion-helper";

  public static void main(String[] args) {
    if (args.length < 3) {
      System.err.println("usage: java SeedCversion DATA_DIR ZXID PATH=CVERSION [PATH=CVERSION...]");
      System.exit(2);
    }
    try {
      seed(new File(args[0]), Long.decode(args[1]), java.util.Arrays.copyOfRange(args, 2, args.length));
      System.exit(0);
    } catch (Exception e) {
      System.err.println("SeedCversion: " + e);
      e.printStackTrace();
      System.exit(1);
    }
  }

  private static void seed(File dataDir, long lastZxid, String[] specs) throws Exception {
    DataTree tree = new DataTree();
    long zxid = 0;
    final long now = System.currentTimeMillis();
    List<String> done = new ArrayList<>();
    for (String spec : specs) {
      int eq = spec.lastIndexOf('=');
      if (eq <= 0) throw new IllegalArgumentException("not PATH=CVERSION: " + spec);
      String path = spec.substring(0, eq);
      int cversion = Integer.parseInt(spec.substring(eq + 1));
      if (!path.startsWith("/") || path.endsWith("/") || path.startsWith("/zookeeper")) {
        throw new IllegalArgumentException("bad path: " + path);
      }
      // The node and its missing ancestors.
      StringBuilder prefix = new StringBuilder();
      for (String part : path.substring(1).split("/")) {
        prefix.append('/').append(part);
        String p = prefix.toString();
        if (tree.getNode(p) == null) {
          tree.createNode(p, new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, 0, -1, ++zxid, now);
        }
      }
      // cversion: a helper child created "as the txn with parentCVersion=N", then deleted.
      String helper = path + "/" + HELPER_CHILD;
      tree.createNode(helper, new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, 0, cversion, ++zxid, now);
      tree.deleteNode(helper, ++zxid);
      DataNode node = tree.getNode(path);
      if (node.stat.getCversion() != cversion || !node.getChildren().isEmpty()) {
        throw new IllegalStateException(path + ": cversion " + node.stat.getCversion() + ", children "
            + node.getChildren() + " (wanted cversion " + cversion + ", no children)");
      }
      done.add(path + " cversion=" + cversion);
    }
    if (lastZxid < zxid) {
      throw new IllegalArgumentException("ZXID " + lastZxid + " is below the " + zxid + " zxids used");
    }
    tree.lastProcessedZxid = lastZxid;
    FileTxnSnapLog snapLog = new FileTxnSnapLog(dataDir, dataDir);
    try {
      snapLog.save(tree, new ConcurrentHashMap<>(), true);
    } finally {
      snapLog.close();
    }
    System.out.println("seeded " + snapLog.getSnapDir() + " at zxid 0x" + Long.toHexString(lastZxid)
        + ": " + String.join(", ", done));
  }
}
