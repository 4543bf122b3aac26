package io.kvorum.node.security;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The bearer tokens of {@code --auth-token-file} (docs/operations.md#security): one per line, blank lines and the
 * spaces around a token ignored, as are a byte-order mark, lines that start with {@code #}
 * (comments), and lines that are not RFC 6750 tokens (logged by number). At most
 * {@value #MAX_TOKENS} tokens in at most {@value #MAX_FILE_BYTES} bytes. Only SHA-256 digests of the
 * tokens are kept, and a presented token is compared with every one of them with
 * {@link MessageDigest#isEqual} (constant time, and no early exit on the first match), so neither
 * the time of an answer nor a heap dump tells a token.
 *
 * <p>{@link #refresh} re-reads the file; the node calls it every {@value #REFRESH_SECONDS} s so
 * that tokens rotate without a restart. A file that is momentarily empty or unreadable, as while
 * an editor rewrites it, keeps the tokens read last. Nothing here logs a token or a line of the file.
 */
public final class BearerTokens {

    /** How often the node re-reads the file; docs/operations.md#security allows 10 s. */
    public static final int REFRESH_SECONDS = 2;
    private static final Logger log = LoggerFactory.getLogger(BearerTokens.class);
    private static final String SCHEME = "bearer ";
    /**
     * Bounds on the file, checked before anything is kept: every request compares the token it
     * presents with every listed one, and the file is read whole every {@value #REFRESH_SECONDS} s.
     */
    static final int MAX_FILE_BYTES = 1 << 20;
    static final int MAX_TOKENS = 1000;
    private static final Pattern TOKEN68 = Pattern.compile("[A-Za-z0-9\\-._~+/]+=*");
    private static final String NOT_TOKENS = " are not bearer tokens (RFC 6750: letters, digits and -._~+/, then '=')"
            + " and are ignored";

    private final Path file;
    private volatile List<byte[]> digests;
    private volatile boolean lastRefreshFailed;

    private BearerTokens(Path file, List<byte[]> digests) {
        this.file = file;
        this.digests = digests;
    }

    /** Reads the file once; see {@link #read}. */
    public static BearerTokens load(Path file) throws InvalidTokenFileException {
        Parsed parsed = parse(file);
        BearerTokens tokens = new BearerTokens(file, parsed.digests());
        tokens.warnOfNotTokens(parsed.notTokens());
        return tokens;
    }

    /**
     * The digests of the file's tokens.
     *
     * @throws InvalidTokenFileException when the file cannot be read, is larger than
     *                                   {@value #MAX_FILE_BYTES} bytes, holds more than {@value #MAX_TOKENS}
     *                                   tokens, or holds none
     */
    public static List<byte[]> read(Path file) throws InvalidTokenFileException {
        return parse(file).digests();
    }

    /** What a read of the file found: the tokens' digests, and the lines that are not tokens. */
    private record Parsed(List<byte[]> digests, List<Integer> notTokens) {
    }

    private static Parsed parse(Path file) throws InvalidTokenFileException {
        String text = text(file);
        if (text.startsWith("\uFEFF")) {
            text = text.substring(1); // a byte-order mark that some editors write first
        }
        List<byte[]> digests = new ArrayList<>();
        List<Integer> notTokens = new ArrayList<>();
        int lineNumber = 0;
        for (String line : text.split("\r?\n|\r", -1)) {
            lineNumber++;
            String token = line.strip();
            if (token.isEmpty() || token.startsWith("#")) {
                continue;
            }
            if (!TOKEN68.matcher(token).matches()) {
                notTokens.add(lineNumber);
                continue;
            }
            if (digests.size() == MAX_TOKENS) {
                throw new InvalidTokenFileException("holds more than " + MAX_TOKENS + " tokens");
            }
            digests.add(sha256(token));
        }
        if (digests.isEmpty()) {
            throw new InvalidTokenFileException(notTokens.isEmpty() ? "holds no token (one per line)"
                    : "holds no token: line(s) " + notTokens + NOT_TOKENS);
        }
        return new Parsed(List.copyOf(digests), List.copyOf(notTokens));
    }

    /** The file as UTF-8, read no further than {@value #MAX_FILE_BYTES} bytes. */
    private static String text(Path file) throws InvalidTokenFileException {
        byte[] bytes;
        try (InputStream in = Files.newInputStream(file)) {
            bytes = in.readNBytes(MAX_FILE_BYTES + 1);
        } catch (NoSuchFileException e) {
            throw new InvalidTokenFileException("cannot be read: it does not exist");
        } catch (AccessDeniedException e) {
            throw new InvalidTokenFileException("cannot be read: permission denied");
        } catch (IOException e) {
            throw new InvalidTokenFileException("cannot be read (not a readable text file)");
        }
        if (bytes.length > MAX_FILE_BYTES) {
            throw new InvalidTokenFileException("is larger than " + MAX_FILE_BYTES + " bytes");
        }
        try {
            return StandardCharsets.UTF_8.newDecoder().decode(ByteBuffer.wrap(bytes)).toString();
        } catch (CharacterCodingException e) {
            throw new InvalidTokenFileException("cannot be read (not a readable text file)");
        }
    }

    /**
     * Logs, by line number only, the lines of the file that no client could present: a bearer token
     * is RFC 6750's token68 (letters, digits, {@code -._~+/}, then {@code =} padding).
     */
    private void warnOfNotTokens(List<Integer> lines) {
        if (!lines.isEmpty()) {
            log.warn("token file {}: line(s) {}{}; '#' starts a comment", file, lines, NOT_TOKENS);
        }
    }

    /**
     * Whether an {@code Authorization} header value ({@code null} when absent) carries one of the
     * tokens. The scheme is case-insensitive, as RFC 7235 says.
     */
    public boolean accepts(String authorization) {
        if (authorization == null || authorization.length() <= SCHEME.length()
                || !authorization.regionMatches(true, 0, SCHEME, 0, SCHEME.length())) {
            return false;
        }
        byte[] presented = sha256(authorization.substring(SCHEME.length()).strip());
        boolean match = false;
        for (byte[] digest : digests) {
            match |= MessageDigest.isEqual(digest, presented);
        }
        return match;
    }

    /** How many tokens are valid now. */
    public int size() {
        return digests.size();
    }

    /**
     * Re-reads the file, and swaps the tokens when they changed. When the file cannot be read or is
     * empty the previous tokens stay, with one warning until the file is usable again.
     */
    public void refresh() {
        Parsed parsed;
        try {
            parsed = parse(file);
        } catch (InvalidTokenFileException e) {
            if (!lastRefreshFailed) {
                log.warn("token file {} {}; keeping the {} token(s) read before", file, e.getMessage(), digests.size());
            }
            lastRefreshFailed = true;
            return;
        }
        lastRefreshFailed = false;
        List<byte[]> fresh = parsed.digests();
        if (!sameTokens(fresh, digests)) {
            digests = fresh;
            log.info("token file {} changed: {} token(s) now valid", file, fresh.size());
            warnOfNotTokens(parsed.notTokens());
        }
    }

    private static boolean sameTokens(List<byte[]> a, List<byte[]> b) {
        if (a.size() != b.size()) {
            return false;
        }
        for (int i = 0; i < a.size(); i++) {
            if (!Arrays.equals(a.get(i), b.get(i))) {
                return false;
            }
        }
        return true;
    }

    private static byte[] sha256(String token) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }

    /** A token file that cannot be used; the message says why, never what the file holds. */
    public static final class InvalidTokenFileException extends Exception {
        InvalidTokenFileException(String fault) {
            super(fault, null, false, false);
        }
    }
}
