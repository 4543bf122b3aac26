package io.kvorum.node.storage;

import java.util.NoSuchElementException;
import java.util.function.Supplier;

/** What the scans over a LevelDB {@link org.iq80.leveldb.DBIterator} share. */
final class DbIterators {

    private DbIterators() {
    }

    /**
     * What {@code read} (the iterator's {@code next} or {@code peekNext}) returns, or null where it
     * throws {@link NoSuchElementException}: the scans take that as the end of the data, even after
     * {@code hasNext()} said there was more.
     */
    static <T> T readOrEnd(Supplier<T> read) {
        try {
            return read.get();
        } catch (NoSuchElementException end) {
            return null;
        }
    }
}
