package io.kvorum.node;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The running parts of a node, in one list: each is added once it exists and before it starts
 * (so a failed start stops what it started), and {@link #stop} stops them in the reverse order.
 * Adding a part after the parts it uses is therefore what makes it stop before them: storage is
 * added first and closed last, the HTTP gateway is added late and stopped early. No framework: a
 * part is a name and a {@link Stop}.
 *
 * <p>A part whose place differs between a graceful stop and a kill (the transport: after the
 * gateway gracefully, before it on a kill) is added at both places, each stop acting on one kind
 * of stop, with a guard so that it stops once.
 *
 * <p>Each part stops once. A part whose stop fails is logged and the others still stop; an
 * interrupt is kept for the caller. Not thread-safe: the node starts and stops it under its lock.
 */
final class Lifecycle {

    private static final Logger log = LoggerFactory.getLogger(Lifecycle.class);

    /** How one part stops. */
    @FunctionalInterface
    interface Stop {
        /**
         * @param graceful true for a graceful stop (let work in progress finish briefly, flush),
         *                 false for a kill (at once, as a crash looks to the outside)
         */
        void stop(boolean graceful) throws Exception;
    }

    private record Part(String name, Stop stop) {
    }

    private final List<Part> parts = new ArrayList<>();
    private boolean stopped;

    /** Adds a part, to be stopped before every part added so far. */
    void add(String name, Stop stop) {
        parts.add(new Part(name, stop));
    }

    boolean isStopped() {
        return stopped;
    }

    /** Stops every part, once; later calls do nothing. */
    void stop(boolean graceful) {
        if (stopped) {
            return;
        }
        stopped = true;
        List<Part> order = new ArrayList<>(parts);
        Collections.reverse(order);
        boolean interrupted = false;
        for (Part part : order) {
            try {
                part.stop().stop(graceful);
            } catch (InterruptedException e) {
                interrupted = true;
                log.warn("interrupted while stopping {}; stopping the rest", part.name());
            } catch (Exception e) {
                log.error("stopping {} failed; stopping the rest", part.name(), e);
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }
}
