package io.kvorum.perf;

/**
 * A command cannot run as asked (a folder it may not write, a value it cannot use), found after the
 * options were parsed: {@link PerfMain} prints its message on one line, without a stack trace, and
 * exits 2, as for a bad option.
 */
final class UsageException extends RuntimeException {

    UsageException(String message) {
        super(message);
    }

    UsageException(String message, Throwable cause) {
        super(message, cause);
    }
}
