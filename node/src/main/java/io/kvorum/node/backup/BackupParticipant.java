package io.kvorum.node.backup;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * A member's side of a cluster backup (docs/architecture.md#backups), this node's own
 * ({@link LocalBackups}) or a peer's as the transport reaches it. Every call has a deadline;
 * failures complete the future exceptionally ({@link BackupException} for a refusal; anything else
 * from a peer means it was not reached).
 */
public interface BackupParticipant {

    /**
     * Phase 1: checks that no other backup runs on the member and creates its folder.
     *
     * @param members every member that takes part, recorded with the part
     */
    CompletableFuture<Void> prepare(String id, List<String> members);

    /** Phase 2: takes the member's snapshot; completes once it is taken, the files follow in the background. */
    CompletableFuture<Void> start(String id);

    /** Gives the member's part up, failed with {@code reason} (nothing happens when it is done or unknown). */
    CompletableFuture<Void> cancel(String id, String reason);

    /** The member's parts of the backups it knows, the newest first. */
    CompletableFuture<List<BackupPart>> parts();
}
