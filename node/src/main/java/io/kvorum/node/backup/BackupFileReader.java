package io.kvorum.node.backup;

import io.kvorum.node.model.Entry;
import io.kvorum.node.model.Record;
import java.io.BufferedInputStream;
import java.io.Closeable;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.zip.GZIPInputStream;

/**
 * Reads one data file of a backup (docs/architecture.md#backup-format) entry by entry, in the
 * order written: {@link #next} answers null at the end marker, after checking the file's entry
 * count. A file that does not follow the format throws {@link IOException} naming it; checking
 * it against its manifest first ({@link BackupManifest#verify}) catches damage before anything
 * is read. Not thread-safe.
 */
public final class BackupFileReader implements Closeable {

    /** Larger than any key or value a node accepts; guards against a damaged length. */
    private static final int MAX_LENGTH = 256 << 20;

    /** What the messages name: the file's path, or what the content came in (a restore batch). */
    private final String file;
    private final DataInputStream in;
    private long entries;
    private boolean ended;

    private BackupFileReader(String file, DataInputStream in) {
        this.file = file;
        this.in = in;
    }

    /** Opens {@code file} (a gzip data file) and checks its magic bytes. */
    public static BackupFileReader open(Path file) throws IOException {
        InputStream raw = Files.newInputStream(file);
        try {
            return start(file.toString(), new BufferedInputStream(new GZIPInputStream(raw, 1 << 16), 1 << 16));
        } catch (IOException | RuntimeException e) {
            raw.close();
            throw e instanceof IOException io && io.getMessage() != null && io.getMessage().startsWith(file.toString())
                    ? io : new IOException(file + ": unreadable: " + e, e);
        }
    }

    /**
     * A reader of the same content uncompressed (a restore batch), checking its magic bytes;
     * messages start with {@code name}.
     */
    public static BackupFileReader plain(InputStream content, String name) throws IOException {
        try {
            return start(name, content);
        } catch (EOFException e) {
            content.close();
            throw new IOException(name + ": not a Kvorum backup file (too short)", e);
        }
    }

    private static BackupFileReader start(String name, InputStream content) throws IOException {
        DataInputStream in = new DataInputStream(content);
        byte[] magic = new byte[BackupFileWriter.MAGIC.length];
        in.readFully(magic);
        if (!Arrays.equals(magic, BackupFileWriter.MAGIC)) {
            in.close();
            throw new IOException(name + ": not a Kvorum backup file (bad magic)");
        }
        return new BackupFileReader(name, in);
    }

    /** The next entry, or null after the last one (the end marker, whose count must match). */
    public Entry next() throws IOException {
        if (ended) {
            return null;
        }
        try {
            int keyLength = in.readInt();
            if (keyLength == BackupFileWriter.END_MARKER) {
                long count = in.readLong();
                if (count != entries) {
                    throw new IOException(file + ": end marker counts " + count + " entries, the file holds " + entries);
                }
                if (in.read() != -1) {
                    throw new IOException(file + ": data after the end marker");
                }
                ended = true;
                return null;
            }
            byte[] key = new byte[checkedLength(keyLength, 1, "key")];
            in.readFully(key);
            long timestamp = in.readLong();
            String writer = in.readUTF();
            boolean tombstone = in.readBoolean();
            long expiresAt = in.readLong();
            byte[] value = readBytes(checkedLength(in.readInt(), 0, "value"));
            entries++;
            return new Entry(key, new Record(timestamp, writer, tombstone, expiresAt, value));
        } catch (EOFException e) {
            throw new IOException(file + ": truncated after " + entries + " entries", e);
        } catch (IllegalArgumentException e) {
            throw new IOException(file + ": damaged entry " + entries + ": " + e.getMessage(), e);
        } catch (IOException e) {
            if (e.getMessage() != null && e.getMessage().startsWith(file)) {
                throw e;
            }
            throw new IOException(file + ": unreadable after " + entries + " entries: " + e, e);
        }
    }

    /**
     * {@code length} bytes, read in slices, so that a length the content does not hold (a damaged
     * file, a hostile batch) fails before the whole of it is allocated.
     */
    private byte[] readBytes(int length) throws IOException {
        int slice = 1 << 20;
        byte[] bytes = new byte[Math.min(length, slice)];
        int read = 0;
        while (read < length) {
            int n = Math.min(slice, length - read);
            if (bytes.length < read + n) {
                bytes = Arrays.copyOf(bytes, Math.min(length, Math.max(read + n, bytes.length * 2)));
            }
            in.readFully(bytes, read, n);
            read += n;
        }
        return bytes;
    }

    private int checkedLength(int length, int min, String what) throws IOException {
        if (length < min || length > MAX_LENGTH) {
            throw new IOException(file + ": damaged " + what + " length " + length + " in entry " + entries);
        }
        return length;
    }

    /** Entries read so far. */
    public long entries() {
        return entries;
    }

    @Override
    public void close() throws IOException {
        in.close();
    }
}
