package io.kvorum.node.backup;

import io.kvorum.node.cluster.ClusterMember;
import io.kvorum.node.cluster.Membership;
import io.kvorum.node.time.Clock;
import io.kvorum.node.util.Failures;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code POST /v0/backup} and {@code GET /v0/backup[/B]} on whichever member serves them
 * (docs/architecture.md#backups). A backup needs every member: phase 1 prepares each (409 when
 * one runs another backup, 503 naming one that is unreachable), the {@code 202} is decided once
 * all are prepared, and only then phase 2 has each take its snapshot. A state is gathered from
 * every member each time it is asked for: the members keep it, on their disks.
 */
public final class BackupCoordinator {

    private static final Logger log = LoggerFactory.getLogger(BackupCoordinator.class);

    private final Supplier<Membership> membership;
    private final Function<String, BackupParticipant> participants;
    private final Predicate<String> isUp;
    private final Clock clock;

    /** The body of the {@code 202}. */
    public record Started(String id, List<String> members) {
    }

    /** One member's part in {@code GET /v0/backup/B}; {@code error} null unless failed. */
    public record MemberState(String state, long records, long bytes, String error) {
    }

    /** The body of {@code GET /v0/backup/B}. */
    public record Status(String id, String state, Map<String, MemberState> members) {
    }

    /** One backup in {@code GET /v0/backup}. */
    public record Summary(String id, String state) {
    }

    /** The body of {@code GET /v0/backup}, the newest first. */
    public record Listing(List<Summary> backups) {
    }

    /**
     * @param participants each member's backup side by id (this node's {@link LocalBackups} for its
     *                     own), or null for a peer that is not connected
     * @param isUp         whether liveness holds a member up
     */
    public BackupCoordinator(Supplier<Membership> membership, Function<String, BackupParticipant> participants,
                             Predicate<String> isUp, Clock clock) {
        this.membership = membership;
        this.participants = participants;
        this.isUp = isUp;
        this.clock = clock;
    }

    /**
     * Prepares a backup on every member; completes with its id once all are, and then (after the
     * future completed, so after its {@code 202} is decided) starts it on every member.
     */
    public CompletableFuture<Started> start() {
        Membership m = membership.get();
        if (m.inChange()) {
            return CompletableFuture.failedFuture(new BackupException(BackupException.Reason.IN_PROGRESS,
                    "a membership change is in progress (" + m.changing().id() + "); back up once it is done"));
        }
        List<String> members = m.topology().members().stream().map(ClusterMember::id).sorted().toList();
        Map<String, BackupParticipant> reached = new LinkedHashMap<>();
        for (String id : members) {
            BackupParticipant p = participants.apply(id);
            if (p == null || !isUp.test(id)) {
                return CompletableFuture.failedFuture(new BackupException(BackupException.Reason.UNAVAILABLE,
                        "member " + id + " is unreachable; a backup needs every member"));
            }
            reached.put(id, p);
        }
        String id = BackupManifest.newId(Instant.ofEpochMilli(clock.currentTimeMillis()));
        List<CompletableFuture<Void>> prepared = new ArrayList<>();
        reached.forEach((member, p) -> prepared.add(p.prepare(id, members)
                .handle((v, e) -> {
                    if (e == null) {
                        return null;
                    }
                    Throwable t = Failures.unwrap(e);
                    throw t instanceof BackupException refused ? refused
                            : new BackupException(BackupException.Reason.UNAVAILABLE, "member " + member
                            + " is unreachable (" + t.getMessage() + "); a backup needs every member");
                })));
        CompletableFuture<Started> decided = new CompletableFuture<>();
        CompletableFuture.allOf(prepared.toArray(CompletableFuture[]::new)).whenComplete((v, e) -> {
            if (e != null) {
                Throwable t = firstFailure(prepared, e);
                cancelAll(reached, id, "refused by a member: " + t.getMessage());
                decided.completeExceptionally(t);
                return;
            }
            log.info("backup {} prepared on {}; starting it", id, members);
            // Completing runs the request's answer first: every snapshot is taken after the 202 is decided.
            decided.complete(new Started(id, members));
            startAll(reached, id);
        });
        return decided;
    }

    private static Throwable firstFailure(List<CompletableFuture<Void>> calls, Throwable fallback) {
        for (CompletableFuture<Void> c : calls) {
            if (c.isCompletedExceptionally()) {
                return Failures.unwrap(c.handle((v, e) -> e).join());
            }
        }
        return Failures.unwrap(fallback);
    }

    private void startAll(Map<String, BackupParticipant> reached, String id) {
        reached.forEach((member, p) -> p.start(id).whenComplete((v, e) -> {
            if (e != null) {
                String reason = "member " + member + " could not start its snapshot: " + Failures.unwrap(e).getMessage();
                log.warn("backup {} failed: {}", id, reason);
                cancelAll(reached, id, reason);
            }
        }));
    }

    private static void cancelAll(Map<String, BackupParticipant> reached, String id, String reason) {
        reached.values().forEach(p -> p.cancel(id, reason).exceptionally(e -> null));
    }

    /** The state of backup {@code id} on every member; fails with {@code NOT_FOUND} when no member reached knows it. */
    public CompletableFuture<Status> status(String id) {
        if (!BackupManifest.isBackupId(id)) {
            return CompletableFuture.failedFuture(new BackupException(BackupException.Reason.NOT_FOUND,
                    "'" + id + "' is not a backup id (yyyyMMdd-HHmmss-xxxxxx)"));
        }
        return gather().thenApply(answers -> {
            Status s = combine(id, answers);
            if (s == null) {
                throw new BackupException(BackupException.Reason.NOT_FOUND, "no member knows backup " + id);
            }
            return s;
        });
    }

    /** Every backup a member reached knows, the newest first, with its state. */
    public CompletableFuture<Listing> list() {
        return gather().thenApply(answers -> {
            Set<String> ids = new TreeSet<>(Comparator.reverseOrder());
            answers.values().forEach(a -> {
                if (a.parts != null) {
                    a.parts.forEach(p -> ids.add(p.id()));
                }
            });
            List<Summary> out = new ArrayList<>();
            for (String id : ids) {
                out.add(new Summary(id, combine(id, answers).state()));
            }
            return new Listing(out);
        });
    }

    /** One member's answer: its parts, or why it was not reached. */
    private record Answer(List<BackupPart> parts, String unreachable) {
    }

    private CompletableFuture<Map<String, Answer>> gather() {
        Map<String, CompletableFuture<Answer>> calls = new TreeMap<>();
        for (ClusterMember m : membership.get().topology().members()) {
            BackupParticipant p = participants.apply(m.id());
            calls.put(m.id(), p == null ? CompletableFuture.completedFuture(new Answer(null, "not connected"))
                    : p.parts().handle((parts, e) -> e == null ? new Answer(parts, null)
                    : new Answer(null, String.valueOf(Failures.unwrap(e).getMessage()))));
        }
        return CompletableFuture.allOf(calls.values().toArray(CompletableFuture[]::new)).thenApply(v -> {
            Map<String, Answer> out = new TreeMap<>();
            calls.forEach((member, call) -> out.put(member, call.join()));
            return out;
        });
    }

    /**
     * The state of {@code id} from the members' answers: failed when a part failed, or a member
     * that takes part is unreachable or has no part; done when every part is; else running. Null
     * when no member reached has a part of it.
     */
    private static Status combine(String id, Map<String, Answer> answers) {
        Map<String, BackupPart> parts = new TreeMap<>();
        Set<String> expected = new LinkedHashSet<>();
        answers.forEach((member, a) -> {
            if (a.parts != null) {
                a.parts.stream().filter(p -> p.id().equals(id)).findFirst().ifPresent(p -> {
                    parts.put(member, p);
                    expected.addAll(p.members());
                });
            }
        });
        if (parts.isEmpty()) {
            return null;
        }
        expected.addAll(parts.keySet());
        Map<String, MemberState> states = new TreeMap<>();
        boolean failed = false;
        boolean done = true;
        for (String member : expected) {
            BackupPart p = parts.get(member);
            Answer a = answers.get(member);
            MemberState s;
            if (p != null) {
                s = new MemberState(p.state(), p.records(), p.bytes(), p.error());
            } else if (a == null) {
                s = new MemberState(BackupPart.FAILED, 0, 0, member + " is no longer a member");
            } else if (a.unreachable != null) {
                s = new MemberState(BackupPart.FAILED, 0, 0, member + " is unreachable: " + a.unreachable);
            } else {
                s = new MemberState(BackupPart.FAILED, 0, 0, member + " has no part of this backup");
            }
            states.put(member, s);
            failed |= s.state().equals(BackupPart.FAILED);
            done &= s.state().equals(BackupPart.DONE);
        }
        return new Status(id, failed ? BackupPart.FAILED : done ? BackupPart.DONE : BackupPart.RUNNING, states);
    }
}
