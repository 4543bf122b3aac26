package io.kvorum.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;

/**
 * Loopback ports for the nodes a test starts: the one free-port allocator of the tests.
 *
 * <p>A port is free "a moment ago": it is bound with port 0 and released before the node binds it,
 * so another process may take it in between. The kernel's ephemeral ports make that rare, and a
 * caller that cares (MiniCluster) retries.
 */
public final class Ports {

    private Ports() {
    }

    /** One port that was free on 127.0.0.1 a moment ago. */
    public static int freePort() {
        return freePorts(1)[0];
    }

    /**
     * {@code count} distinct ports that were free on 127.0.0.1 a moment ago: all are bound with
     * port 0 at once and released only after all are chosen, so none repeats.
     */
    public static int[] freePorts(int count) {
        if (count < 0) {
            throw new IllegalArgumentException("count " + count + " < 0");
        }
        List<ServerSocket> sockets = new ArrayList<>(count);
        try {
            for (int i = 0; i < count; i++) {
                sockets.add(new ServerSocket(0, 1, InetAddress.getLoopbackAddress()));
            }
            return sockets.stream().mapToInt(ServerSocket::getLocalPort).toArray();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot allocate " + count + " loopback ports", e);
        } finally {
            for (ServerSocket s : sockets) {
                try {
                    s.close();
                } catch (IOException ignored) {
                    // a socket that fails to close keeps its port; the others are released
                }
            }
        }
    }
}
