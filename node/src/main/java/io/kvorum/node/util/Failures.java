package io.kvorum.node.util;

import java.util.concurrent.CompletionException;

/** Failures as futures report them: wrapped in {@link CompletionException}s that say nothing. */
public final class Failures {

    private Failures() {
    }

    /** The failure inside any {@link CompletionException} wrappers (itself when there are none). */
    public static Throwable unwrap(Throwable t) {
        while (t instanceof CompletionException && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }
}
