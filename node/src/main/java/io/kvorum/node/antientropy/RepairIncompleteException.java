package io.kvorum.node.antientropy;

import io.kvorum.node.error.RequestException;

/**
 * A repair that could not reach every peer: {@code POST /v0/repair} answers 504 with this message,
 * which names those peers, followed by the summary of the rounds that did complete ({@link #report}).
 */
public final class RepairIncompleteException extends RequestException {

    private final RepairReport report;

    public RepairIncompleteException(RepairReport report) {
        super(Code.REPAIR_INCOMPLETE, "could not reach " + report.failures());
        this.report = report;
    }

    public RepairReport report() {
        return report;
    }
}
