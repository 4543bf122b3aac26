package io.kvorum.node.backup;

import com.google.gson.Gson;
import com.google.gson.JsonParseException;
import io.kvorum.client.placement.ClusterView;
import io.kvorum.node.cluster.Membership;
import io.kvorum.node.metrics.NodeMetrics;
import io.kvorum.node.model.Entry;
import io.kvorum.node.storage.LevelDbStore;
import io.kvorum.node.storage.StorageService;
import io.kvorum.node.time.Clock;
import io.kvorum.node.util.DurableFiles;
import io.kvorum.node.util.Pace;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This node's side of cluster backups (docs/architecture.md#backups): it prepares a part in
 * {@code <backup-dir>/<id>/<node-id>/}, then takes one LevelDB snapshot (an iterator, which reads
 * one consistent view of the store) and writes it on its own background thread, paced by the
 * anti-entropy rate and bandwidth, in the files of docs/architecture.md#backup-format, the
 * manifest last. One backup at a time.
 *
 * <p>What it must know after a restart is on the disk: {@value #PART_FILE} records the members
 * and, once it failed, why; a part with a manifest is done; one without a manifest that is not
 * running in this process is failed (the node stopped mid-way).
 *
 * <p>The snapshot pins the LevelDB files it reads for as long as the part is written: a long
 * backup of a store under heavy writes keeps files on the disk that compactions replaced.
 */
public final class LocalBackups implements BackupParticipant, AutoCloseable {

    /** Per part: the members and, once failed, the reason. Not part of the backup format. */
    static final String PART_FILE = "part.json";
    /** Most parts {@link #parts} reports, the newest first. */
    static final int MOST_PARTS = 1000;
    /** Most entries read at once; fewer at a slow pace, so that a stop waits a tenth of a second at most. */
    private static final int BATCH_ENTRIES = 256;
    private static final int BATCH_BYTES = 256 * 1024;
    private static final Logger log = LoggerFactory.getLogger(LocalBackups.class);
    private static final Gson JSON = new Gson();

    private final String selfId;
    private final Path backupDir;
    private final StorageService storage;
    private final Supplier<Membership> membership;
    private final ExecutorService writer;
    private final ScheduledExecutorService timer;
    private final Duration startWait;
    private final Pace recordPace;
    private final Pace bytePace;
    private final int batchEntries;
    private final NodeMetrics metrics;
    private final Clock clock;

    /** Guarded by this: the part prepared or being written, if any. */
    private Running running;
    /** Guarded by this. */
    private boolean closed;

    /** What {@value #PART_FILE} holds. */
    record PartFile(List<String> members, String error) {
    }

    /**
     * @param writer    runs the writing of a part (one at a time): a thread of its own, never a
     *                  request's
     * @param timer     fails a prepared part that is not started within {@code startWait}
     */
    public LocalBackups(String selfId, Path backupDir, StorageService storage, Supplier<Membership> membership,
                        ExecutorService writer, ScheduledExecutorService timer, Duration startWait,
                        long recordsPerSecond, long bytesPerSecond, NodeMetrics metrics, Clock clock) {
        this.selfId = selfId;
        this.backupDir = backupDir;
        this.storage = storage;
        this.membership = membership;
        this.writer = writer;
        this.timer = timer;
        this.startWait = startWait;
        this.recordPace = Pace.steady(recordsPerSecond);
        this.bytePace = Pace.steady(bytesPerSecond);
        this.batchEntries = (int) Math.max(1, Math.min(BATCH_ENTRIES, recordsPerSecond / 10));
        this.metrics = metrics;
        this.clock = clock;
    }

    /** Where this node writes its parts. */
    public Path backupDir() {
        return backupDir;
    }

    private Path partDir(String id) {
        return backupDir.resolve(id).resolve(selfId);
    }

    @Override
    public synchronized CompletableFuture<Void> prepare(String id, List<String> members) {
        if (!BackupManifest.isBackupId(id)) {
            return CompletableFuture.failedFuture(new BackupException(BackupException.Reason.INVALID,
                    "'" + id + "' is not a backup id"));
        }
        if (running != null) {
            return running.id.equals(id) ? CompletableFuture.completedFuture(null)
                    : CompletableFuture.failedFuture(new BackupException(BackupException.Reason.IN_PROGRESS,
                    "backup " + running.id + " is in progress on " + selfId));
        }
        if (closed) {
            return CompletableFuture.failedFuture(new BackupException(BackupException.Reason.UNAVAILABLE,
                    selfId + " is stopping"));
        }
        Path dir = partDir(id);
        try {
            if (Files.exists(dir.resolve(PART_FILE))) {
                throw new BackupException(BackupException.Reason.IN_PROGRESS, "backup " + id + " exists on " + selfId);
            }
            Files.createDirectories(dir);
            writePartFile(dir, new PartFile(List.copyOf(members), null));
        } catch (IOException e) {
            return CompletableFuture.failedFuture(new BackupException(BackupException.Reason.UNAVAILABLE,
                    selfId + " cannot create " + dir + ": " + e.getMessage()));
        } catch (BackupException e) {
            return CompletableFuture.failedFuture(e);
        }
        Running r = new Running(id, List.copyOf(members), dir);
        running = r;
        timer.schedule(() -> {
            if (!r.started) {
                fail(r, "not started within " + startWait.toSeconds() + " s of its preparation (the coordinator "
                        + "gave up or was lost)");
            }
        }, startWait.toMillis(), TimeUnit.MILLISECONDS);
        log.info("backup {} prepared in {}", id, dir);
        return CompletableFuture.completedFuture(null);
    }

    @Override
    public CompletableFuture<Void> start(String id) {
        Running r;
        synchronized (this) {
            r = running;
            if (r == null || !r.id.equals(id)) {
                return CompletableFuture.failedFuture(new BackupException(BackupException.Reason.INVALID,
                        "backup " + id + " is not prepared on " + selfId));
            }
            if (r.started) {
                return CompletableFuture.completedFuture(null);
            }
            r.started = true;
            r.startedAt = clock.currentTimeMillis();
            r.startNanos = System.nanoTime();
            try {
                // The snapshot: every write stored before this line is in it, none after.
                r.cursor = storage.store().cursor(new byte[0], null);
                r.view = membership.get();
            } catch (RuntimeException e) {
                finishFailed(r, "cannot take a snapshot of the store: " + e.getMessage());
                return CompletableFuture.failedFuture(e);
            }
        }
        writer.execute(() -> write(r));
        log.info("backup {}: snapshot taken, writing it to {}", id, r.dir);
        return CompletableFuture.completedFuture(null);
    }

    @Override
    public CompletableFuture<Void> cancel(String id, String reason) {
        Running r;
        synchronized (this) {
            r = running;
        }
        if (r != null && r.id.equals(id)) {
            fail(r, reason);
        }
        return CompletableFuture.completedFuture(null);
    }

    /** Fails {@code r}: at once if it is not being written, else its writer stops at its next batch. */
    private void fail(Running r, String reason) {
        synchronized (this) {
            if (running != r) {
                return;
            }
            if (r.started && r.cursor != null) {
                r.cancelled = reason;
                return;
            }
            finishFailed(r, reason);
        }
    }

    private void write(Running r) {
        try (LevelDbStore.Cursor cursor = r.cursor; BackupFileWriter out = new BackupFileWriter(r.dir)) {
            while (true) {
                String cancelled = r.cancelled;
                if (cancelled != null) {
                    throw new IOException(cancelled);
                }
                List<Entry> batch = cursor.next(batchEntries, BATCH_BYTES);
                if (batch.isEmpty()) {
                    break;
                }
                long bytes = 0;
                for (Entry e : batch) {
                    out.write(e.key(), e.record());
                    bytes += e.key().length + e.record().value().length;
                }
                r.records = out.records();
                r.bytes = out.bytes();
                metrics.backupWritten(batch.size(), 0);
                recordPace.acquire(batch.size());
                bytePace.acquire(bytes);
            }
            List<BackupManifest.FileEntry> files = out.finish();
            metrics.backupWritten(0, out.bytes());
            Membership m = r.view;
            ClusterView view = m.view();
            BackupManifest.of(r.id, selfId, m.clusterName(), Instant.ofEpochMilli(r.startedAt),
                    Instant.ofEpochMilli(clock.currentTimeMillis()),
                    new BackupManifest.Membership(view.epoch(), view.members()), files).writeTo(r.dir);
            synchronized (this) {
                if (running == r) {
                    running = null;
                }
            }
            metrics.backupDone(System.nanoTime() - r.startNanos, clock.currentTimeMillis() / 1000);
            log.info("backup {}: {} records, {} bytes written to {}", r.id, out.records(), out.bytes(), r.dir);
        } catch (IOException | RuntimeException e) {
            synchronized (this) {
                finishFailed(r, e.getMessage() != null ? e.getMessage() : e.toString());
            }
        }
    }

    /** Call with this held: records the failure on the disk and frees the slot. */
    private void finishFailed(Running r, String reason) {
        if (running == r) {
            running = null;
        }
        metrics.backupFailed();
        log.warn("backup {} failed on this node: {}", r.id, reason);
        try {
            writePartFile(r.dir, new PartFile(r.members, reason));
        } catch (IOException e) {
            log.warn("cannot record the failure of backup {} in {}: {}", r.id, r.dir, e.getMessage());
        }
    }

    private static void writePartFile(Path dir, PartFile part) throws IOException {
        Path temp = dir.resolve(PART_FILE + ".tmp");
        DurableFiles.writeForced(temp, JSON.toJson(part));
        DurableFiles.replaceForced(temp, dir.resolve(PART_FILE));
    }

    @Override
    public CompletableFuture<List<BackupPart>> parts() {
        Running r;
        synchronized (this) {
            r = running;
        }
        List<String> ids = new ArrayList<>();
        try (DirectoryStream<Path> dirs = Files.newDirectoryStream(backupDir)) {
            for (Path d : dirs) {
                String id = d.getFileName().toString();
                if (BackupManifest.isBackupId(id) && Files.isDirectory(d.resolve(selfId))) {
                    ids.add(id);
                }
            }
        } catch (NoSuchFileException e) {
            return CompletableFuture.completedFuture(List.of());
        } catch (IOException e) {
            return CompletableFuture.failedFuture(e);
        }
        ids.sort(Comparator.reverseOrder());
        List<BackupPart> parts = new ArrayList<>();
        for (String id : ids.subList(0, Math.min(ids.size(), MOST_PARTS))) {
            parts.add(r != null && r.id.equals(id) ? r.part() : stored(id));
        }
        return CompletableFuture.completedFuture(parts);
    }

    /** A part not running in this process, as its folder says. */
    private BackupPart stored(String id) {
        Path dir = partDir(id);
        PartFile part;
        try {
            part = JSON.fromJson(Files.readString(dir.resolve(PART_FILE), StandardCharsets.UTF_8), PartFile.class);
        } catch (IOException | JsonParseException e) {
            part = null;
        }
        List<String> members = part == null || part.members() == null ? List.of() : part.members();
        if (part != null && part.error() != null) {
            return new BackupPart(id, BackupPart.FAILED, 0, 0, part.error(), members);
        }
        try {
            BackupManifest m = BackupManifest.read(dir);
            return new BackupPart(id, BackupPart.DONE, m.records(), m.bytes(), null, members);
        } catch (IOException e) {
            return new BackupPart(id, BackupPart.FAILED, 0, 0, "incomplete: " + selfId
                    + " stopped before its part was written", members);
        }
    }

    /**
     * Stops writing: a part in progress ends failed (on a graceful stop, with its reason on the
     * disk; on a kill, as a crash leaves it), and its snapshot is released before the store closes.
     */
    public void close(boolean graceful) throws InterruptedException {
        synchronized (this) {
            closed = true;
        }
        Running r;
        synchronized (this) {
            r = running;
        }
        if (r != null) {
            if (graceful) {
                fail(r, selfId + " stopped before its part was written");
            } else {
                r.cancelled = selfId + " was killed before its part was written";
            }
        }
        writer.shutdown();
        if (!writer.awaitTermination(5, TimeUnit.SECONDS)) {
            writer.shutdownNow();
        }
    }

    @Override
    public void close() throws InterruptedException {
        close(true);
    }

    /** The part prepared or being written. */
    private static final class Running {
        final String id;
        final List<String> members;
        final Path dir;
        volatile boolean started;
        volatile String cancelled;
        volatile long records;
        volatile long bytes;
        long startedAt;
        long startNanos;
        LevelDbStore.Cursor cursor;
        Membership view;

        Running(String id, List<String> members, Path dir) {
            this.id = id;
            this.members = members;
            this.dir = dir;
        }

        BackupPart part() {
            return new BackupPart(id, BackupPart.RUNNING, records, bytes, null, members);
        }
    }
}
