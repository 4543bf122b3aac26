package io.kvorum.node.util;

import java.util.concurrent.CompletionException;

/** Failures as futures report them: wrapped in {@link CompletionException}s that say nothing. */
public final class Failures {

    private Failures() {
    }

    /**
     * {@code "; TLS handshake failed: <why>"} when {@code t} or one of its causes is a TLS failure (a
     * peer whose certificate another CA signed), else {@code ""}: gRPC reports those as an
     * UNAVAILABLE "io exception", which says nothing. The JDK's reasons name no key material.
     */
    public static String tlsReason(Throwable t) {
        for (Throwable c = t; c != null && c.getCause() != c; c = c.getCause()) {
            if (c instanceof javax.net.ssl.SSLException) {
                Throwable root = c; // the engine's own message is often generic; the validator's says why
                while (root.getCause() != null && root.getCause() != root) {
                    root = root.getCause();
                }
                return "; TLS handshake failed: " + root.getMessage();
            }
        }
        return "";
    }

    /** The failure inside any {@link CompletionException} wrappers (itself when there are none). */
    public static Throwable unwrap(Throwable t) {
        while (t instanceof CompletionException && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }
}
