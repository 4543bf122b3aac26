package io.kvorum.node.admin;

import io.kvorum.node.antientropy.AntiEntropyState;
import io.kvorum.node.http.NodeStatus;
import io.kvorum.node.storage.StorageFailures;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The text of {@code kvorum status}: a node's {@code GET /v0/status} as a header and one line per
 * member, the way that node sees the cluster, and last lines when its store has failed reads or
 * writes, when it refuses writes for its clock, and when it is rebuilding its copies. A pure function of the status, the address it
 * was read from and the current time, so it can be checked without a node.
 */
final class ClusterSummary {

    /** Longest anti-entropy error shown; the rest is in the node's /v0/status and log. */
    static final int MAX_ERROR_CHARS = 60;

    private final NodeStatus status;
    private final String address;
    private final long nowMillis;

    /**
     * @param status    the node's answer, already checked to be a status ({@link #isStatus})
     * @param address   host:port it was read from, shown as that node's address
     * @param nowMillis the current time, epoch ms, against which "since" and "ago" are shown
     */
    ClusterSummary(NodeStatus status, String address, long nowMillis) {
        this.status = status;
        this.address = address;
        this.nowMillis = nowMillis;
    }

    /** Whether a parsed body has what a Kvorum node's status always has (a node id and a cluster size). */
    static boolean isStatus(NodeStatus status) {
        return status != null && status.node() != null && status.clusterSize() > 0;
    }

    /** True when every peer this node knows is up (a single node has none); "unknown" is not up. */
    boolean allUp() {
        return peers().values().stream().allMatch(p -> "up".equals(p.state()));
    }

    /** The header, the member table and a closing count, as lines without line breaks. */
    List<String> lines() {
        List<String> lines = new ArrayList<>();
        AntiEntropyState ae = status.antiEntropy();
        lines.add(String.format(Locale.ROOT, "Kvorum cluster of %d node(s), replication factor %d, as %s sees it%s; "
                        + "%s stores %s", status.clusterSize(), status.replicationFactor(), status.node(),
                ae == null ? "" : "; anti-entropy trees " + ae.trees(), status.node(), size(status.storageBytes())));
        List<List<String>> rows = new ArrayList<>();
        rows.add(List.of("ID", "ADDRESS", "STATE", "SINCE", "RTT", "CLOCK", "HINTS", "LAST ANTI-ENTROPY ROUND"));
        rows.add(List.of(status.node(), address, "up (this node)", "-", "-", "-", "-", "-"));
        Map<String, NodeStatus.Peer> peers = peers();
        peers.forEach((id, peer) -> rows.add(List.of(id, peer.address() == null ? "-" : peer.address(),
                String.valueOf(peer.state()), ago(peer.since()),
                peer.rttMicros() < 0 ? "-" : String.format(Locale.ROOT, "%.2f ms", peer.rttMicros() / 1000.0),
                clock(peer.clockOffsetMillis()), hintsFor(id), lastRound(ae, id))));
        lines.addAll(aligned(rows));
        long up = peers.values().stream().filter(p -> "up".equals(p.state())).count() + 1;
        lines.add(String.format(Locale.ROOT, "%d of %d members up", up, status.clusterSize())
                + (status.hints() == null ? "" : String.format(Locale.ROOT, "; hints delivered %d, dropped %d since %s started",
                status.hints().delivered(), status.hints().dropped(), status.node())));
        StorageFailures.Summary failed = status.storageErrors();
        if (failed != null) {
            lines.add(String.format(Locale.ROOT, "STORAGE ERRORS: %s's store failed %d read(s) and %d write(s) since it "
                            + "started; the last, %s: %s", status.node(), failed.reads(), failed.writes(),
                    ago(failed.lastAt()), failed.last()));
        }
        if (status.writesRefused() != null) {
            lines.add("WRITES REFUSED: " + status.writesRefused());
        }
        if (NodeStatus.REBUILDING.equals(status.status())) {
            NodeStatus.Rebuilding how = status.rebuilding();
            lines.add(how != null && "checking".equals(how.phase())
                    ? "REBUILDING: " + status.node() + " started on an empty store and asks its peers whether the cluster "
                    + "knew it with data; it answers no read as a replica meanwhile"
                    : String.format(Locale.ROOT, "REBUILDING: %s lost its data and takes its copies back from the other "
                    + "replicas (%d records so far); it answers no read as a replica until done", status.node(),
                    how == null ? 0 : how.recordsTaken()));
        }
        return lines;
    }

    /** "+2 ms", "-1.3 s": how far a peer's clock is from this node's; "-" when not measured. */
    static String clock(Long offsetMillis) {
        if (offsetMillis == null) {
            return "-";
        }
        String sign = offsetMillis > 0 ? "+" : "";
        return Math.abs(offsetMillis) < 10_000
                ? sign + offsetMillis + " ms"
                : sign + String.format(Locale.ROOT, "%.1f s", offsetMillis / 1000.0);
    }

    private Map<String, NodeStatus.Peer> peers() {
        return status.peers() == null ? Map.of() : status.peers();
    }

    private String hintsFor(String peer) {
        if (status.hints() == null) {
            return "-";
        }
        Long pending = status.hints().pending() == null ? null : status.hints().pending().get(peer);
        return Long.toString(pending == null ? 0 : pending);
    }

    private String lastRound(AntiEntropyState ae, String peer) {
        AntiEntropyState.LastRound round = ae == null || ae.lastRounds() == null ? null : ae.lastRounds().get(peer);
        if (round == null) {
            return "none yet";
        }
        if (round.ok()) {
            return String.format(Locale.ROOT, "ok %s, %d records in %d ms", ago(round.endedAt()), round.recordsExchanged(),
                    round.durationMs());
        }
        String error = round.error() == null ? "unknown error" : round.error();
        if (error.length() > MAX_ERROR_CHARS) {
            error = error.substring(0, MAX_ERROR_CHARS) + "...";
        }
        return "failed " + ago(round.endedAt()) + ": " + error;
    }

    /** "812 KiB", "3.2 GiB": a data size as an operator reads it. */
    static String size(long bytes) {
        if (bytes < 1024) {
            return bytes + " B";
        }
        String[] units = {"KiB", "MiB", "GiB", "TiB"};
        double value = bytes;
        int unit = -1;
        while (value >= 1024 && unit < units.length - 1) {
            value /= 1024;
            unit++;
        }
        return String.format(Locale.ROOT, value < 10 ? "%.1f %s" : "%.0f %s", value, units[unit]);
    }

    /** "12s ago", "3m ago", "2h ago", "4d ago" from an epoch-ms instant; "-" for 0 (never). */
    String ago(long epochMillis) {
        if (epochMillis <= 0) {
            return "-";
        }
        long seconds = Math.max(0, (nowMillis - epochMillis) / 1000);
        if (seconds < 120) {
            return seconds + "s ago";
        }
        if (seconds < 2 * 3600) {
            return seconds / 60 + "m ago";
        }
        return seconds < 2 * 86400 ? seconds / 3600 + "h ago" : seconds / 86400 + "d ago";
    }

    /** Rows padded to the widest cell of each column but the last. */
    private static List<String> aligned(List<List<String>> rows) {
        int columns = rows.get(0).size();
        int[] width = new int[columns];
        for (List<String> row : rows) {
            for (int i = 0; i < columns; i++) {
                width[i] = Math.max(width[i], row.get(i).length());
            }
        }
        List<String> out = new ArrayList<>();
        for (List<String> row : rows) {
            StringBuilder line = new StringBuilder();
            for (int i = 0; i < columns - 1; i++) {
                line.append(row.get(i)).append(" ".repeat(width[i] - row.get(i).length() + 2));
            }
            out.add(line.append(row.get(columns - 1)).toString());
        }
        return out;
    }
}
