import io.kvorum.node.storage.LevelDbOpener;
import java.nio.file.*;
import java.util.*;
import org.iq80.leveldb.*;

/** Cost of LevelDB batch writes with keys in arrival order vs sorted; batches of B records + B index entries. */
public class SortCost {
    public static void main(String[] a) throws Exception {
        int batchSize = Integer.parseInt(a[0]); int rounds = Integer.parseInt(a[1]);
        Path dir = Files.createTempDirectory("sortcost");
        DB db = LevelDbOpener.open(dir, 64 << 20, 16 << 20);
        Random rnd = new Random(1);
        byte[] value = new byte[270]; rnd.nextBytes(value);
        int batches = 20000;
        for (int r = 0; r < rounds; r++) {
            for (boolean sorted : new boolean[]{false, true}) {
                long t0 = System.nanoTime();
                for (int b = 0; b < batches; b++) {
                    List<byte[][]> ops = new ArrayList<>(2 * batchSize);
                    for (int i = 0; i < batchSize; i++) {
                        int k = rnd.nextInt(100_000);
                        byte[] key = ("key" + k).getBytes();
                        ops.add(new byte[][]{key, value});
                        byte[] idx = new byte[3 + key.length]; idx[0] = (byte) 0xFF; idx[1] = (byte) (k >> 8); idx[2] = (byte) k;
                        System.arraycopy(key, 0, idx, 3, key.length);
                        ops.add(new byte[][]{idx, new byte[8]});
                    }
                    if (sorted) ops.sort((x, y) -> Arrays.compareUnsigned(x[0], y[0]));
                    try (WriteBatch wb = db.createWriteBatch()) {
                        for (byte[][] op : ops) wb.put(op[0], op[1]);
                        db.write(wb);
                    }
                }
                long ns = System.nanoTime() - t0;
                System.out.printf("round %d %s batch %d: %.2f us per record%n", r, sorted ? "sorted  " : "unsorted", batchSize, ns / 1000.0 / batches / batchSize);
            }
        }
        db.close();
    }
}
