package io.kvorum.node.backup;

import java.util.List;

/**
 * One member's part of a backup, as the member reports it (docs/operations.md#backup-and-restore).
 *
 * @param id      the backup id
 * @param state   {@value #RUNNING}, {@value #DONE} or {@value #FAILED}
 * @param records entries written so far (all of them once done)
 * @param bytes   bytes of data files written so far
 * @param error   why the part failed; null otherwise
 * @param members the members that take part in the backup, as the coordinator named them
 */
public record BackupPart(String id, String state, long records, long bytes, String error, List<String> members) {

    public static final String RUNNING = "running";
    public static final String DONE = "done";
    public static final String FAILED = "failed";

    public BackupPart {
        members = List.copyOf(members);
    }
}
