package io.kvorum.client;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * What a client may send as {@code Authorization: Bearer <token>}, and the token file the
 * {@linkplain KvorumClient.Builder#bearerTokenFile builder} reads. Tokens are never put in a message.
 */
final class BearerTokens {

    /** A token file is a token and some blank lines: anything larger is not one. */
    static final int MAX_FILE_BYTES = 64 * 1024;

    private BearerTokens() {
    }

    /** Whether {@code token} can be sent: printable ASCII without spaces, not empty. */
    static boolean isValid(String token) {
        return token != null && !token.isEmpty() && token.chars().allMatch(c -> c >= 0x21 && c <= 0x7e);
    }

    /**
     * The token held in {@code file}, looked at again at most every {@code checkIntervalNanos}.
     *
     * @throws IllegalArgumentException when the file cannot be read now or does not hold one valid token
     */
    static Supplier<String> fromFile(Path file, long checkIntervalNanos) {
        String token;
        try {
            token = read(file);
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read the bearer token file " + file + ": " + e, e);
        }
        if (token == null) {
            throw new IllegalArgumentException("the bearer token file " + file + " does not hold exactly one token"
                    + " (one line of printable ASCII without spaces; blank lines are ignored)");
        }
        return new TokenFile(file, token, checkIntervalNanos);
    }

    static Supplier<String> fromFile(Path file) {
        return fromFile(file, TokenFile.CHECK_INTERVAL_NANOS);
    }

    /** The file's one valid token, or null when it holds none, more than one, or is too large. */
    private static String read(Path file) throws IOException {
        byte[] bytes;
        try (InputStream in = Files.newInputStream(file)) {
            bytes = in.readNBytes(MAX_FILE_BYTES + 1);
        }
        if (bytes.length > MAX_FILE_BYTES) {
            return null;
        }
        String token = null;
        for (String line : new String(bytes, StandardCharsets.US_ASCII).split("\r?\n")) {
            String trimmed = line.strip();
            if (trimmed.isEmpty()) {
                continue;
            }
            if (token != null || !isValid(trimmed)) {
                return null;
            }
            token = trimmed;
        }
        return token;
    }

    /**
     * A token kept in a file, read again when a request asks for it and the last read is at least
     * {@link #CHECK_INTERVAL_NANOS} old: a rotated token is sent about a second after the file
     * changed. Reading a file of a few bytes once a second costs a request nothing measurable, and,
     * unlike a modification time, never misses a rewrite. While the file is missing, unreadable, or
     * holds no single valid token (an editor rewriting it in place), the token read before is kept,
     * as a node keeps its tokens (docs/operations.md#security). Thread-safe: one caller at a time re-reads, the others
     * take the token read before.
     */
    private static final class TokenFile implements Supplier<String> {

        static final long CHECK_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(1);

        private final Path file;
        private final OncePer reads;
        private volatile String token;

        TokenFile(Path file, String token, long checkIntervalNanos) {
            this.file = file;
            this.token = token;
            this.reads = new OncePer(checkIntervalNanos);
        }

        @Override
        public String get() {
            if (reads.due()) {
                try {
                    String read = read(file);
                    if (read != null) {
                        token = read;
                    }
                } catch (IOException e) {
                    // keep the token read before: the file is being replaced, or was removed by mistake
                }
            }
            return token;
        }

        @Override
        public String toString() { // never the token
            return "token file " + file;
        }
    }
}
