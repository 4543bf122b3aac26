package io.kvorum.node.admin;

import io.kvorum.node.backup.BackupFileReader;
import io.kvorum.node.backup.BackupManifest;
import io.kvorum.node.model.Entry;
import io.kvorum.node.model.Record;
import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.PriorityQueue;

/**
 * The records of a backup's member folders merged into one sequence in ascending unsigned key
 * order, each key once with its newest version ({@link Record#newest}). A member writes its part
 * from one store snapshot in key order (docs/architecture.md#backup-format), so a key that several
 * replicas hold is read from each of them side by side and sent once: a restore of RF copies costs
 * the cluster one write per key, not RF. A member folder whose keys do not ascend was not written
 * by a member; it stops the merge with an {@link IOException} naming the file. Not thread-safe.
 */
final class MergedRecords implements Closeable {

    private static final Comparator<MemberRecords> BY_HEAD_KEY =
            Comparator.<MemberRecords, byte[]>comparing(m -> m.head.key(), Arrays::compareUnsigned)
                    .thenComparingInt(m -> m.index);

    private final List<MemberRecords> all;
    private final PriorityQueue<MemberRecords> byKey = new PriorityQueue<>(BY_HEAD_KEY);
    private long read;
    private String position = "";

    /**
     * @param members each member folder with its manifest, already verified against it
     */
    MergedRecords(List<RestoreCommand.Member> members) throws IOException {
        this.all = new ArrayList<>();
        try {
            for (int i = 0; i < members.size(); i++) {
                MemberRecords m = new MemberRecords(i, members.get(i));
                all.add(m);
                if (m.advance()) {
                    byKey.add(m);
                }
            }
        } catch (IOException | RuntimeException e) {
            close();
            throw e;
        }
    }

    /** The next key with its newest version among the member folders, or null after the last key. */
    Entry next() throws IOException {
        MemberRecords first = byKey.poll();
        if (first == null) {
            return null;
        }
        Entry merged = take(first);
        while (!byKey.isEmpty() && Arrays.equals(byKey.peek().head.key(), merged.key())) {
            Entry same = take(byKey.poll());
            merged = new Entry(merged.key(), Record.newest(merged.record(), same.record()));
        }
        return merged;
    }

    /** Records read from the files so far (every member's copy of a key counts). */
    long read() {
        return read;
    }

    /** The file the last key was read from, as {@code member/file}, for progress lines. */
    String position() {
        return position;
    }

    private Entry take(MemberRecords m) throws IOException {
        Entry head = m.head;
        read++;
        position = m.position();
        if (m.advance()) {
            byKey.add(m);
        }
        return head;
    }

    @Override
    public void close() {
        for (MemberRecords m : all) {
            m.close();
        }
    }

    /** One member folder's records, file after file in its manifest's order. */
    private static final class MemberRecords {
        final int index;
        private final RestoreCommand.Member member;
        private final Iterator<BackupManifest.FileEntry> files;
        private BackupFileReader reader;
        private String file;
        private Entry head;

        MemberRecords(int index, RestoreCommand.Member member) {
            this.index = index;
            this.member = member;
            this.files = member.manifest().files().iterator();
        }

        /** Moves {@link #head} to the member's next record; false (and no head) after its last. */
        boolean advance() throws IOException {
            byte[] previous = head == null ? null : head.key();
            head = null;
            while (true) {
                if (reader == null) {
                    if (!files.hasNext()) {
                        return false;
                    }
                    file = files.next().name();
                    Path path = member.dir().resolve(file);
                    reader = BackupFileReader.open(path);
                }
                Entry e = reader.next();
                if (e == null) {
                    reader.close();
                    reader = null;
                    continue;
                }
                if (previous != null && Arrays.compareUnsigned(previous, e.key()) >= 0) {
                    throw new IOException(member.dir().resolve(file) + ": keys out of order (a member writes its part in "
                            + "ascending key order); this folder was not written by a member");
                }
                head = e;
                return true;
            }
        }

        String position() {
            return member.name() + "/" + file;
        }

        void close() {
            if (reader != null) {
                try {
                    reader.close();
                } catch (IOException e) {
                    // Only read from: nothing is lost by a failed close.
                }
                reader = null;
            }
        }
    }
}
