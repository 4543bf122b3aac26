package io.kvorum.node.backup;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import com.google.gson.JsonParseException;
import io.kvorum.client.placement.ClusterView;
import io.kvorum.node.util.DurableFiles;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Pattern;

/**
 * The {@value #FILE_NAME} of one member's part of a backup (docs/architecture.md#backup-format):
 * what the member wrote, with each data file's size, SHA-256 and record count, and the member's
 * view of the membership. Written last and atomically, so a member folder without it is
 * incomplete. Its components are the file's fields, as Gson maps them.
 *
 * @param format     {@value #FORMAT}
 * @param backup     the backup id ({@link #isBackupId})
 * @param node       the member that wrote it
 * @param cluster    the cluster's name
 * @param startedAt  ISO-8601 instant the member took its snapshot
 * @param finishedAt ISO-8601 instant its last file was written
 * @param records    entries in all files
 * @param bytes      bytes of all files
 * @param membership the member's view of the membership when it took its snapshot
 * @param files      the data files, in order
 */
public record BackupManifest(int format, String backup, String node, String cluster, String startedAt,
                             String finishedAt, long records, long bytes, Membership membership,
                             List<FileEntry> files) {

    public static final String FILE_NAME = "manifest.json";
    public static final int FORMAT = 1;
    private static final Gson JSON = new GsonBuilder().setPrettyPrinting().disableHtmlEscaping().create();
    private static final Pattern ID = Pattern.compile("\\d{8}-\\d{6}-[0-9a-f]{6}");
    private static final Pattern DATA_FILE = Pattern.compile("records-\\d{6}\\.gz");
    private static final DateTimeFormatter ID_TIME = DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss").withZone(ZoneOffset.UTC);

    /** The membership as the member saw it: its epoch and members as {@code GET /v0/cluster} lists them. */
    public record Membership(long epoch, List<ClusterView.Member> members) {
    }

    /** One data file: its name in the member folder, size in bytes, SHA-256 (lowercase hex), entries. */
    public record FileEntry(String name, long bytes, String sha256, long records) {
    }

    /** A file of a member folder that is missing, damaged or does not match the manifest. */
    public static final class DamagedException extends IOException {
        private final transient Path file;

        public DamagedException(Path file, String problem) {
            super(file + ": " + problem);
            this.file = file;
        }

        /** The file at fault. */
        public Path file() {
            return file;
        }
    }

    /** A manifest of the files a {@link BackupFileWriter} wrote, totals added up. */
    public static BackupManifest of(String backup, String node, String cluster, Instant startedAt, Instant finishedAt,
                                    Membership membership, List<FileEntry> files) {
        long records = files.stream().mapToLong(FileEntry::records).sum();
        long bytes = files.stream().mapToLong(FileEntry::bytes).sum();
        return new BackupManifest(FORMAT, backup, node, cluster, startedAt.toString(), finishedAt.toString(), records,
                bytes, membership, List.copyOf(files));
    }

    /** A new backup id for {@code now}: {@code yyyyMMdd-HHmmss-<6 hex>}, UTC, sortable, safe as a folder name. */
    public static String newId(Instant now) {
        return ID_TIME.format(now) + "-" + String.format("%06x", ThreadLocalRandom.current().nextInt(1 << 24));
    }

    /** True when {@code id} has the shape of a backup id (and so is safe as a folder name). */
    public static boolean isBackupId(String id) {
        return id != null && ID.matcher(id).matches();
    }

    /** Writes the manifest into {@code memberDir} atomically: aside, forced, renamed, the folder forced. */
    public void writeTo(Path memberDir) throws IOException {
        Path target = memberDir.resolve(FILE_NAME);
        Path temp = memberDir.resolve(FILE_NAME + ".tmp");
        DurableFiles.writeForced(temp, JSON.toJson(this) + "\n");
        DurableFiles.replaceForced(temp, target);
    }

    /**
     * Reads the manifest of {@code memberDir}.
     *
     * @throws DamagedException naming the manifest when it is missing or cannot be parsed
     */
    public static BackupManifest read(Path memberDir) throws IOException {
        Path file = memberDir.resolve(FILE_NAME);
        BackupManifest m;
        try {
            m = JSON.fromJson(Files.readString(file, StandardCharsets.UTF_8), BackupManifest.class);
        } catch (NoSuchFileException e) {
            throw new DamagedException(file, "missing (the member's part is incomplete)");
        } catch (JsonParseException | IllegalArgumentException e) {
            throw new DamagedException(file, "not a valid manifest: " + e.getMessage());
        }
        if (m == null || m.format != FORMAT || m.files == null || m.node == null || !isBackupId(m.backup)) {
            throw new DamagedException(file, "not a valid manifest of format " + FORMAT);
        }
        for (FileEntry f : m.files) {
            if (f == null || f.name == null || !DATA_FILE.matcher(f.name).matches() || f.sha256 == null) {
                throw new DamagedException(file, "lists an invalid data file " + (f == null ? null : f.name));
            }
        }
        return m;
    }

    /**
     * Reads the manifest of {@code memberDir} and checks every data file it lists: present, of
     * its size and SHA-256, readable to its end marker and holding the entries the manifest
     * counts. Answers the manifest.
     *
     * @throws DamagedException naming the first file that is missing or damaged
     */
    public static BackupManifest verify(Path memberDir) throws IOException {
        BackupManifest m = read(memberDir);
        m.verifyFiles(memberDir);
        return m;
    }

    /** Checks every data file this manifest lists against {@code memberDir}, see {@link #verify}. */
    public void verifyFiles(Path memberDir) throws IOException {
        for (FileEntry f : files) {
            Path path = memberDir.resolve(f.name);
            long size;
            try {
                size = Files.size(path);
            } catch (NoSuchFileException e) {
                throw new DamagedException(path, "missing");
            }
            if (size != f.bytes) {
                throw new DamagedException(path, size + " bytes, the manifest says " + f.bytes);
            }
            MessageDigest digest = BackupFileWriter.sha256();
            byte[] buffer = new byte[1 << 16];
            try (InputStream in = Files.newInputStream(path)) {
                for (int n; (n = in.read(buffer)) > 0; ) {
                    digest.update(buffer, 0, n);
                }
            }
            if (!HexFormat.of().formatHex(digest.digest()).equals(f.sha256)) {
                throw new DamagedException(path, "SHA-256 differs from the manifest (damaged)");
            }
            long entries;
            try (BackupFileReader reader = BackupFileReader.open(path)) {
                while (reader.next() != null) {
                    // counted by the reader, which checks the end marker's count
                }
                entries = reader.entries();
            } catch (IOException e) {
                throw new DamagedException(path, "unreadable: " + e.getMessage());
            }
            if (entries != f.records) {
                throw new DamagedException(path, "holds " + entries + " entries, the manifest says " + f.records);
            }
        }
    }
}
