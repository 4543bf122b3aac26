package io.kvorum.node.security;

import java.io.IOException;
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
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The bearer tokens of {@code --auth-token-file} (SPEC §7): one per line, blank lines and the
 * spaces around a token ignored. Only SHA-256 digests of the tokens are kept, and a presented token
 * is compared with every one of them with {@link MessageDigest#isEqual} (constant time, and no early
 * exit on the first match), so neither the time of an answer nor a heap dump tells a token.
 *
 * <p>{@link #refresh} re-reads the file; the node calls it every {@value #REFRESH_SECONDS} s so
 * that tokens rotate without a restart. A file that is momentarily empty or unreadable, as while
 * an editor rewrites it, keeps the tokens read last. Nothing here logs a token or a line of the file.
 */
public final class BearerTokens {

    /** How often the node re-reads the file; SPEC §7 allows 10 s. */
    public static final int REFRESH_SECONDS = 2;
    private static final Logger log = LoggerFactory.getLogger(BearerTokens.class);
    private static final String SCHEME = "bearer ";

    private final Path file;
    private volatile List<byte[]> digests;
    private volatile boolean lastRefreshFailed;

    private BearerTokens(Path file, List<byte[]> digests) {
        this.file = file;
        this.digests = digests;
    }

    /** Reads the file once; see {@link #read}. */
    public static BearerTokens load(Path file) throws InvalidTokenFileException {
        return new BearerTokens(file, read(file));
    }

    /**
     * The digests of the file's tokens.
     *
     * @throws InvalidTokenFileException when the file cannot be read or holds no token
     */
    public static List<byte[]> read(Path file) throws InvalidTokenFileException {
        List<String> lines;
        try {
            lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            throw new InvalidTokenFileException("cannot be read: it does not exist");
        } catch (AccessDeniedException e) {
            throw new InvalidTokenFileException("cannot be read: permission denied");
        } catch (IOException e) {
            throw new InvalidTokenFileException("cannot be read (not a readable text file)");
        }
        List<byte[]> digests = new ArrayList<>();
        for (String line : lines) {
            String token = line.strip();
            if (!token.isEmpty()) {
                digests.add(sha256(token));
            }
        }
        if (digests.isEmpty()) {
            throw new InvalidTokenFileException("holds no token (one per line)");
        }
        return List.copyOf(digests);
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
        List<byte[]> fresh;
        try {
            fresh = read(file);
        } catch (InvalidTokenFileException e) {
            if (!lastRefreshFailed) {
                log.warn("token file {} {}; keeping the {} token(s) read before", file, e.getMessage(), digests.size());
            }
            lastRefreshFailed = true;
            return;
        }
        lastRefreshFailed = false;
        if (!sameTokens(fresh, digests)) {
            digests = fresh;
            log.info("token file {} changed: {} token(s) now valid", file, fresh.size());
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
