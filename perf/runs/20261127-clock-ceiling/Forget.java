import static org.fusesource.leveldbjni.JniDBFactory.factory;
import java.io.File;
import org.iq80.leveldb.DB;
import org.iq80.leveldb.Options;

/** Deletes the timestamp ceiling's key (0xFF 0x02) from a stopped node's records, as a store of an older version lacks it. */
public class Forget {
    public static void main(String[] args) throws Exception {
        try (DB db = factory.open(new File(args[0]), new Options().createIfMissing(false))) {
            System.out.println("key present: " + (db.get(new byte[] {(byte) 0xFF, 0x02}) != null));
            db.delete(new byte[] {(byte) 0xFF, 0x02});
        }
    }
}
