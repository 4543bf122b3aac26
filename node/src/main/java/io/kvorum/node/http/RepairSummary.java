package io.kvorum.node.http;

import io.kvorum.node.antientropy.RepairReport;
import java.util.List;

/**
 * The JSON summary of an anti-entropy run that {@code POST /v0/repair} answers (docs/http-api.md),
 * in this field order: the peers whose round completed, those whose round failed, then the sums
 * over the completed rounds, the duration of the whole run, and the state of the node's maintained
 * trees (absent when not known).
 */
record RepairSummary(List<String> peers, List<String> unreachable, long bucketsCompared, long bucketsDiffering,
                     long recordsSent, long recordsReceived, long bytesSent, long bytesReceived, long durationMs,
                     String trees) {

    static RepairSummary of(RepairReport report) {
        return new RepairSummary(report.peers(), List.copyOf(report.failed().keySet()), report.bucketsCompared(),
                report.bucketsDiffering(), report.recordsSent(), report.recordsReceived(), report.bytesSent(),
                report.bytesReceived(), report.durationMs(), report.trees());
    }
}
