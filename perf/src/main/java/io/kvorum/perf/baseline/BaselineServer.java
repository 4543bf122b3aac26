package io.kvorum.perf.baseline;

import java.net.URI;

/**
 * A server that answers every request 200 with the same body, running while open: what
 * {@code perf nginx} and {@code perf netty} measure with the load tool, as yardsticks for the node.
 */
public interface BaselineServer extends AutoCloseable {

    /** Where it listens, on 127.0.0.1. */
    URI uri();

    /** The command it runs as, for the report. */
    String commandLine();

    /** Its process id; the processes it started (nginx's workers) are its descendants. */
    long pid();

    /** Stops it; kills it if it does not stop by itself. */
    @Override
    void close();
}
