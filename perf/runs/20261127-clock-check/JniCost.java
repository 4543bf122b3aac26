import org.fusesource.leveldbjni.JniDBFactory;
import org.fusesource.leveldbjni.internal.NativeBuffer;
import org.iq80.leveldb.*;
import java.io.File;
import java.nio.file.Files;
import java.util.SplittableRandom;

/**
 * What one single-record write costs through leveldbjni three ways, on one thread: a WriteBatch (as
 * the node writes), the same inside a NativeBuffer memory pool (no malloc per key and value), and
 * db.put. Usage: java -cp leveldbjni-all-1.8.jar:. JniCost ROUNDS
 */
public class JniCost {
    public static void main(String[] args) throws Exception {
        int rounds = Integer.parseInt(args[0]);
        File dir = Files.createTempDirectory("jnicost").toFile();
        Options o = new Options().createIfMissing(true).cacheSize(64L << 20).writeBufferSize(16 << 20);
        DB db = JniDBFactory.factory.open(dir, o);
        WriteOptions wo = new WriteOptions().sync(false);
        int keys = 100_000;
        byte[][] ks = new byte[keys][];
        for (int k = 0; k < keys; k++) ks[k] = ("key" + k).getBytes();
        byte[] value = new byte[280];
        java.util.Arrays.fill(value, (byte) 'v');
        SplittableRandom r = new SplittableRandom(1);
        int n = 300_000;
        for (int round = 0; round < rounds; round++) {
            long t0 = System.nanoTime();
            for (int i = 0; i < n; i++) {
                try (WriteBatch b = db.createWriteBatch()) { b.put(ks[r.nextInt(keys)], value); db.write(b, wo); }
            }
            long t1 = System.nanoTime();
            for (int i = 0; i < n; i++) {
                NativeBuffer.pushMemoryPool(4096);
                try (WriteBatch b = db.createWriteBatch()) { b.put(ks[r.nextInt(keys)], value); db.write(b, wo); }
                finally { NativeBuffer.popMemoryPool(); }
            }
            long t2 = System.nanoTime();
            for (int i = 0; i < n; i++) {
                db.put(ks[r.nextInt(keys)], value, wo);
            }
            long t3 = System.nanoTime();
            System.out.printf("round %d: batch %.2f us, pooled batch %.2f us, db.put %.2f us%n", round + 1,
                    (t1 - t0) / 1000.0 / n, (t2 - t1) / 1000.0 / n, (t3 - t2) / 1000.0 / n);
        }
        db.close();
    }
}
