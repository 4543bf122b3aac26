package io.kvorum.node.backup;

import io.kvorum.node.model.Record;
import java.io.BufferedOutputStream;
import java.io.Closeable;
import java.io.DataOutputStream;
import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.DigestOutputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.zip.GZIPOutputStream;

/**
 * Writes one member's part of a backup: the data files {@code records-NNNNNN.gz} of
 * docs/architecture.md#backup-format, in store order, each closed once its uncompressed content
 * passes {@link #FILE_LIMIT}. Each file is forced to the disk when it is closed; {@link #finish}
 * answers the files' sizes, SHA-256 and record counts for the manifest, which the caller writes
 * last ({@link BackupManifest#writeTo}). Not thread-safe.
 */
public final class BackupFileWriter implements Closeable {

    /** Uncompressed bytes after which a data file is closed and the next one started. */
    public static final long FILE_LIMIT = 64L << 20;
    static final byte[] MAGIC = "KVB1".getBytes(StandardCharsets.US_ASCII);
    static final int END_MARKER = -1;

    private final Path dir;
    private final long fileLimit;
    private final List<BackupManifest.FileEntry> files = new ArrayList<>();
    private OpenFile current;
    private long records;
    private long bytes;

    /** A writer into {@code memberDir} (created if missing), files bounded by {@link #FILE_LIMIT}. */
    public BackupFileWriter(Path memberDir) throws IOException {
        this(memberDir, FILE_LIMIT);
    }

    /** A writer whose files close past {@code fileLimit} uncompressed bytes (tests use small ones). */
    public BackupFileWriter(Path memberDir, long fileLimit) throws IOException {
        if (fileLimit <= 0) {
            throw new IllegalArgumentException("file limit must be positive: " + fileLimit);
        }
        this.dir = Files.createDirectories(memberDir);
        this.fileLimit = fileLimit;
    }

    /** The data file name of index {@code i}: {@code records-000000.gz} for 0. */
    public static String fileName(int i) {
        return String.format("records-%06d.gz", i);
    }

    /** Appends one entry; keys must come in store order (ascending). */
    public void write(byte[] key, Record record) throws IOException {
        if (key.length == 0) {
            throw new IllegalArgumentException("empty key");
        }
        if (current == null) {
            current = new OpenFile(dir.resolve(fileName(files.size())));
        }
        DataOutputStream out = current.data;
        writeEntry(out, key, record);
        current.entries++;
        records++;
        if (out.size() >= fileLimit || out.size() < 0) {
            closeCurrent();
        }
    }

    /** The magic bytes that start the content of a data file, or of a restore batch. */
    public static void writeMagic(DataOutputStream out) throws IOException {
        out.write(MAGIC);
    }

    /** One entry in the format's encoding (docs/architecture.md#backup-format). */
    public static void writeEntry(DataOutputStream out, byte[] key, Record record) throws IOException {
        out.writeInt(key.length);
        out.write(key);
        out.writeLong(record.timestamp());
        out.writeUTF(record.writer());
        out.writeBoolean(record.tombstone());
        out.writeLong(record.expiresAtMillis());
        out.writeInt(record.value().length);
        out.write(record.value());
    }

    /** The end marker and the count of the entries before it. */
    public static void writeEnd(DataOutputStream out, long entries) throws IOException {
        out.writeInt(END_MARKER);
        out.writeLong(entries);
    }

    /** Entries written so far. */
    public long records() {
        return records;
    }

    /** Bytes of the data files closed so far (compressed, as on the disk). */
    public long bytes() {
        return bytes;
    }

    /** Closes the last file and answers every file written, in order, for the manifest. */
    public List<BackupManifest.FileEntry> finish() throws IOException {
        closeCurrent();
        return List.copyOf(files);
    }

    /** Abandons an unfinished file (after a failure); the files closed before stay. */
    @Override
    public void close() throws IOException {
        if (current != null) {
            OpenFile f = current;
            current = null;
            f.data.close();
        }
    }

    private void closeCurrent() throws IOException {
        if (current == null) {
            return;
        }
        OpenFile f = current;
        current = null;
        writeEnd(f.data, f.entries);
        f.data.flush();
        f.gzip.finish();
        f.data.flush();
        f.channel.force(true);
        f.data.close();
        files.add(new BackupManifest.FileEntry(f.path.getFileName().toString(), f.counter.count,
                HexFormat.of().formatHex(f.digest.digest()), f.entries));
        bytes += f.counter.count;
    }

    private static final class OpenFile {
        final Path path;
        final FileChannel channel;
        final MessageDigest digest;
        final CountingStream counter;
        final GZIPOutputStream gzip;
        final DataOutputStream data;
        long entries;

        OpenFile(Path path) throws IOException {
            this.path = path;
            this.channel = FileChannel.open(path, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING,
                    StandardOpenOption.WRITE);
            this.digest = sha256();
            this.counter = new CountingStream(new DigestOutputStream(Channels.newOutputStream(channel), digest));
            this.gzip = new GZIPOutputStream(counter, 1 << 16);
            this.data = new DataOutputStream(new BufferedOutputStream(gzip, 1 << 16));
            data.write(MAGIC);
        }
    }

    static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JDK has no SHA-256", e);
        }
    }

    /** Counts the bytes that reach the file. */
    private static final class CountingStream extends FilterOutputStream {
        long count;

        CountingStream(OutputStream out) {
            super(out);
        }

        @Override
        public void write(int b) throws IOException {
            out.write(b);
            count++;
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            out.write(b, off, len);
            count += len;
        }
    }
}
