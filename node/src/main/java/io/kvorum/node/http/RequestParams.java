package io.kvorum.node.http;

import io.kvorum.node.coordinator.Quorum;
import io.kvorum.node.http.QueryDecoder.Param;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The query parameters of one request, validated against docs/http-api.md. Known parameters may appear at
 * most once and never empty; unknown parameters are ignored.
 */
final class RequestParams {

    static final int MAX_KEY_BYTES = 1024;
    /** Digits of a number parameter, at most: any such number fits a long, with room to add a clock to it. */
    private static final int MAX_DIGITS = 18;
    private static final List<String> KNOWN = List.of("id", "ack", "from", "replicas", "ttl", "start", "end");

    private final Map<String, byte[]> known;

    private RequestParams(Map<String, byte[]> known) {
        this.known = known;
    }

    static RequestParams parse(String rawQuery) {
        Map<String, byte[]> known = new HashMap<>();
        for (Param p : QueryDecoder.decode(rawQuery)) {
            if (!KNOWN.contains(p.name())) {
                continue;
            }
            if (known.put(p.name(), p.value()) != null) {
                throw new BadRequestException("parameter '" + p.name() + "' is given more than once");
            }
            if (p.value().length == 0) {
                throw new BadRequestException("parameter '" + p.name() + "' is empty");
            }
        }
        return new RequestParams(known);
    }

    boolean has(String name) {
        return known.containsKey(name);
    }

    /** The {@code id} of an entity request: 1 to 1024 bytes. */
    byte[] key() {
        return keyParam("id");
    }

    /** A key-valued parameter ({@code id}, {@code start}, {@code end}): present, 1 to 1024 bytes. */
    byte[] keyParam(String name) {
        byte[] key = known.get(name);
        if (key == null) {
            throw new BadRequestException("parameter '" + name + "' is missing");
        }
        if (key.length > MAX_KEY_BYTES) {
            throw new BadRequestException("parameter '" + name + "' is " + key.length + " bytes; the limit is "
                    + MAX_KEY_BYTES);
        }
        return key;
    }

    /** The {@code id} of a membership request: a member's id, as text. */
    String memberId() {
        return new String(keyParam("id"), StandardCharsets.UTF_8);
    }

    /** A key-valued parameter that may be absent (null). */
    byte[] optionalKeyParam(String name) {
        return has(name) ? keyParam(name) : null;
    }

    /**
     * The quorum of an entity request: {@code ack}/{@code from}, or the legacy {@code replicas=A/F},
     * with defaults {@code from = replicationFactor} and {@code ack = from / 2 + 1}.
     */
    Quorum quorum(int replicationFactor, int clusterSize) {
        boolean modern = has("ack") || has("from");
        if (modern && has("replicas")) {
            throw new BadRequestException("give either ack/from or replicas, not both");
        }
        Integer ack;
        Integer from;
        if (has("replicas")) {
            String replicas = string("replicas");
            int slash = replicas.indexOf('/');
            if (slash < 0) {
                throw new BadRequestException("replicas must look like ACK/FROM, got '" + replicas + "'");
            }
            ack = positiveInt("replicas", replicas.substring(0, slash));
            from = positiveInt("replicas", replicas.substring(slash + 1));
        } else {
            ack = has("ack") ? positiveInt("ack", string("ack")) : null;
            from = has("from") ? positiveInt("from", string("from")) : null;
        }
        int f = from != null ? from : replicationFactor;
        if (f > clusterSize) {
            throw new BadRequestException(from != null
                    ? "from=" + f + " is more than the " + clusterSize + " nodes of the cluster"
                    : "the replication factor " + f + ", the default from, is more than the " + clusterSize
                            + " nodes of the cluster; name a from of at most " + clusterSize);
        }
        if (ack == null) {
            return Quorum.majorityOf(f);
        }
        if (ack > f) {
            throw new BadRequestException("ack=" + ack + " is more than from=" + f);
        }
        return new Quorum(ack, f);
    }

    /** The {@code ttl} in milliseconds, or 0 when absent. Valid only on PUT; callers check. */
    long ttlMillis() {
        return has("ttl") ? positiveLong("ttl", string("ttl")) : 0;
    }

    private String string(String name) {
        return new String(known.get(name), StandardCharsets.UTF_8);
    }

    private static int positiveInt(String name, String s) {
        long v = positiveLong(name, s);
        if (v > Integer.MAX_VALUE) {
            throw new BadRequestException(name + " is too large: '" + s + "'");
        }
        return (int) v;
    }

    private static long positiveLong(String name, String s) {
        if (s.isEmpty() || !s.chars().allMatch(c -> c >= '0' && c <= '9')) {
            throw new BadRequestException(name + " must be a positive integer, got '" + s + "'");
        }
        int digits = s.replaceFirst("^0+", "").length();
        if (digits > MAX_DIGITS) {
            throw new BadRequestException(name + " is too large: " + digits + " digits, at most " + MAX_DIGITS);
        }
        long v = Long.parseLong(s);
        if (v <= 0) {
            throw new BadRequestException(name + " must be a positive integer, got '" + s + "'");
        }
        return v;
    }
}
