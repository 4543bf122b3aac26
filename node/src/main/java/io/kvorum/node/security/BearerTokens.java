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
import java.util.EnumMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The bearer tokens of {@code --auth-token-file} (docs/operations.md#security): one per line, as
 * {@code TOKEN}, {@code TOKEN ROLE} or {@code TOKEN ROLE NAME} separated by spaces. ROLE is a
 * {@link Role} ({@code admin} when there is none); NAME, how logs refer to the token, defaults to
 * the first 8 hex digits of the token's SHA-256. Blank lines and the spaces around a line are
 * ignored, as are a byte-order mark, lines that start with {@code #} (comments), and lines whose
 * token is not an RFC 6750 token (logged by number). An unknown role, a NAME that is not 1 to 64
 * of {@code A-Za-z0-9._@:-}, a fourth field, or a token listed twice makes the file invalid. At
 * most {@value #MAX_TOKENS} tokens in at most {@value #MAX_FILE_BYTES} bytes. Only SHA-256 digests
 * of the tokens are kept, and a presented token is compared with every one of them with
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
    private static final Pattern FIELD_SEPARATOR = Pattern.compile("[ \\t]+");
    /** A NAME goes into log lines as it is: nothing that could break or forge one. */
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9._@:-]{1,64}");
    private static final String LINE_FORMAT = " (a line is TOKEN, TOKEN ROLE or TOKEN ROLE NAME, separated by spaces;"
            + " ROLE is read, write or admin)";

    private final Path file;
    private volatile List<Entry> entries;
    private volatile boolean lastRefreshFailed;

    private BearerTokens(Path file, List<Entry> entries) {
        this.file = file;
        this.entries = entries;
    }

    /** Who presents a valid token, as the file says: its NAME and its role. Holds nothing of the token. */
    public record Bearer(String name, Role role) {
    }

    /** A line of the file: the token's digest, and its bearer. */
    private record Entry(byte[] digest, Bearer bearer) {
        boolean sameAs(Entry other) {
            return Arrays.equals(digest, other.digest) && bearer.equals(other.bearer);
        }
    }

    /** Reads the file once; see {@link #validate}. */
    public static BearerTokens load(Path file) throws InvalidTokenFileException {
        Parsed parsed = parse(file);
        BearerTokens tokens = new BearerTokens(file, parsed.entries());
        tokens.warnOfNotTokens(parsed.notTokens());
        return tokens;
    }

    /**
     * Checks that the file can be used, as {@link #load} would.
     *
     * @throws InvalidTokenFileException when the file cannot be read, is larger than
     *                                   {@value #MAX_FILE_BYTES} bytes, holds more than {@value #MAX_TOKENS}
     *                                   tokens, none, or a line that is not {@code TOKEN [ROLE [NAME]]}
     */
    public static void validate(Path file) throws InvalidTokenFileException {
        parse(file);
    }

    /** What a read of the file found: its tokens, and the lines that are not tokens. */
    private record Parsed(List<Entry> entries, List<Integer> notTokens) {
    }

    private static Parsed parse(Path file) throws InvalidTokenFileException {
        String text = text(file);
        if (text.startsWith("\uFEFF")) {
            text = text.substring(1); // a byte-order mark that some editors write first
        }
        List<Entry> entries = new ArrayList<>();
        List<Integer> lineNumbers = new ArrayList<>();
        List<Integer> notTokens = new ArrayList<>();
        int lineNumber = 0;
        for (String line : text.split("\r?\n|\r", -1)) {
            lineNumber++;
            String stripped = line.strip();
            if (stripped.isEmpty() || stripped.startsWith("#")) {
                continue;
            }
            String[] fields = FIELD_SEPARATOR.split(stripped);
            if (!TOKEN68.matcher(fields[0]).matches()) {
                notTokens.add(lineNumber);
                continue;
            }
            Entry entry = entry(fields, lineNumber);
            for (int i = 0; i < entries.size(); i++) {
                if (Arrays.equals(entries.get(i).digest(), entry.digest())) {
                    throw new InvalidTokenFileException("lists a token twice, on lines " + lineNumbers.get(i) + " and "
                            + lineNumber + " (one line a token, with its role)");
                }
            }
            if (entries.size() == MAX_TOKENS) {
                throw new InvalidTokenFileException("holds more than " + MAX_TOKENS + " tokens");
            }
            entries.add(entry);
            lineNumbers.add(lineNumber);
        }
        if (entries.isEmpty()) {
            throw new InvalidTokenFileException(notTokens.isEmpty() ? "holds no token (one per line)"
                    : "holds no token: line(s) " + notTokens + NOT_TOKENS);
        }
        return new Parsed(List.copyOf(entries), List.copyOf(notTokens));
    }

    /**
     * The token of a line whose first field is one, with its role and NAME. The messages name the
     * line, never a field: a token written where a role or NAME belongs must not reach a log.
     */
    private static Entry entry(String[] fields, int lineNumber) throws InvalidTokenFileException {
        if (fields.length > 3) {
            throw new InvalidTokenFileException("line " + lineNumber + " has more than three fields" + LINE_FORMAT);
        }
        Role role = fields.length > 1 ? Role.named(fields[1]) : Role.ADMIN;
        if (role == null) {
            throw new InvalidTokenFileException("line " + lineNumber + ": the second field is not a role" + LINE_FORMAT);
        }
        byte[] digest = sha256(fields[0]);
        if (fields.length < 3) {
            return new Entry(digest, new Bearer(HexFormat.of().formatHex(digest, 0, 4), role));
        }
        if (!NAME.matcher(fields[2]).matches() || fields[2].equals(fields[0])) {
            throw new InvalidTokenFileException("line " + lineNumber + ": the NAME (third field) is 1 to 64 letters,"
                    + " digits or ._@:- and not the token itself, as it names the token in logs");
        }
        return new Entry(digest, new Bearer(fields[2], role));
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
     * Who an {@code Authorization} header value ({@code null} when absent) names: the bearer of the
     * token it carries, or null when it carries none of the file's. The scheme is case-insensitive,
     * as RFC 7235 says. Every token is compared, whichever matches.
     */
    public Bearer bearer(String authorization) {
        if (authorization == null || authorization.length() <= SCHEME.length()
                || !authorization.regionMatches(true, 0, SCHEME, 0, SCHEME.length())) {
            return null;
        }
        byte[] presented = sha256(authorization.substring(SCHEME.length()).strip());
        Bearer match = null;
        for (Entry entry : entries) {
            boolean equal = MessageDigest.isEqual(entry.digest(), presented);
            match = equal ? entry.bearer() : match;
        }
        return match;
    }

    /** Whether an {@code Authorization} header value carries one of the tokens, whatever its role. */
    public boolean accepts(String authorization) {
        return bearer(authorization) != null;
    }

    /** How many tokens are valid now. */
    public int size() {
        return entries.size();
    }

    /** How many tokens are valid now, by role: {@code 3 bearer token(s) (admin 1, write 1, read 1)}. Names no token. */
    public String summary() {
        return summary(entries);
    }

    private static String summary(List<Entry> entries) {
        Map<Role, Integer> byRole = new EnumMap<>(Role.class);
        for (Entry entry : entries) {
            byRole.merge(entry.bearer().role(), 1, Integer::sum);
        }
        StringBuilder roles = new StringBuilder();
        for (Role role : List.of(Role.ADMIN, Role.WRITE, Role.READ)) {
            roles.append(roles.length() == 0 ? "" : ", ").append(role).append(' ').append(byRole.getOrDefault(role, 0));
        }
        return entries.size() + " bearer token(s) (" + roles + ")";
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
                log.warn("token file {} {}; keeping the {} token(s) read before", file, e.getMessage(), entries.size());
            }
            lastRefreshFailed = true;
            return;
        }
        lastRefreshFailed = false;
        List<Entry> fresh = parsed.entries();
        if (!sameTokens(fresh, entries)) {
            entries = fresh;
            log.info("token file {} changed: {} now valid", file, summary(fresh));
            warnOfNotTokens(parsed.notTokens());
        }
    }

    /** The same tokens with the same roles and NAMEs, in the same order. */
    private static boolean sameTokens(List<Entry> a, List<Entry> b) {
        if (a.size() != b.size()) {
            return false;
        }
        for (int i = 0; i < a.size(); i++) {
            if (!a.get(i).sameAs(b.get(i))) {
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
