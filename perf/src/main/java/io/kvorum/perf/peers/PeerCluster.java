package io.kvorum.perf.peers;

import java.io.IOException;
import java.util.List;

/**
 * A running cluster of one system on this machine, started by {@code perf peers}: the processes
 * whose CPU time is measured, and a client for the load. {@link #close} stops every process
 * (a shutdown hook does too, so Ctrl-C leaves none behind) and deletes the data.
 */
public interface PeerCluster extends AutoCloseable {

    /** The server processes, one per node, whose CPU time counts as the system's. */
    List<Long> pids();

    /** A client connected to every node; the caller closes it before the cluster. */
    KeyValueTarget connect() throws IOException, InterruptedException;

    /** Exact command line of each node, for the report. */
    List<String> commandLines();

    @Override
    void close();
}
