package io.kvorum.testkit;

import io.kvorum.client.KvorumClient;
import io.kvorum.client.KvorumException;
import java.net.ConnectException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletionException;

/**
 * A record of client operations against a cluster, each with when it was sent and answered and
 * what the answer lets a checker conclude. Thread-safe: many clients record into one history.
 */
public final class History {

    public enum Type { PUT, DELETE, GET }

    /** What an answer says about a write's effect (for a read, only {@link #OK} carries a value). */
    public enum Outcome {
        /** 201/202, or a read that answered 200/404. */
        OK,
        /** Certainly no effect: 503, or the connection was refused (the request never left the client). */
        NO_EFFECT,
        /**
         * 504: a coordinator received the write, so it may have been applied, with a timestamp the
         * coordinator assigned before it answered, i.e. before {@link Op#completeMillis()}.
         */
        MAYBE_BEFORE_ANSWER,
        /**
         * No answer (client timeout, connection lost): the write may have been applied, possibly
         * much later, e.g. by a paused coordinator once it is thawed.
         */
        MAYBE_ANY_TIME
    }

    /**
     * One operation. Times: {@code *Nanos} from {@link System#nanoTime()} for real-time order;
     * {@code *Millis} from {@link System#currentTimeMillis()}, the clock the nodes' hybrid logical
     * clocks read (the containers share this machine's kernel clock).
     *
     * @param value the value written by a PUT, or read by an OK GET ({@code null}: absent)
     */
    public record Op(int client, String node, Type type, String key, String value, Outcome outcome,
              long invokeNanos, long completeNanos, long invokeMillis, long completeMillis, String error) {

        public boolean isWrite() {
            return type != Type.GET;
        }

        public boolean isAcked() {
            return outcome == Outcome.OK;
        }

        @Override
        public String toString() {
            return String.format("%s %s=%s via %s by c%d [%d..%d ms] %s%s", type, key, value == null ? "(absent)" : value,
                    node, client, invokeMillis, completeMillis, outcome, error == null ? "" : " (" + error + ")");
        }
    }

    private final List<Op> ops = new ArrayList<>();

    /** Sends one request with the cluster's default quorum and records it, with its outcome classified. */
    public Op perform(int clientId, String nodeId, KvorumClient client, Type type, String key, String putValue) {
        return perform(clientId, nodeId, client, type, key, putValue, KvorumClient.Options.DEFAULT);
    }

    /**
     * Sends one request with {@code options} ({@code ack} and {@code from}) and records it. The
     * {@link HistoryChecker} holds reads to the quorum rule, so every request on one key must name
     * the same {@code from}, and a read's {@code ack} plus a write's must exceed it.
     */
    public Op perform(int clientId, String nodeId, KvorumClient client, Type type, String key, String putValue,
                      KvorumClient.Options options) {
        long invokeMillis = System.currentTimeMillis();
        long invokeNanos = System.nanoTime();
        String value = putValue;
        Outcome outcome;
        String error = null;
        try {
            switch (type) {
                case PUT -> client.put(key, putValue.getBytes(StandardCharsets.UTF_8), options).join();
                case DELETE -> client.delete(key, options).join();
                case GET -> {
                    Optional<byte[]> read = client.get(key, options).join();
                    value = read.map(b -> new String(b, StandardCharsets.UTF_8)).orElse(null);
                }
                default -> throw new IllegalArgumentException(type.toString());
            }
            outcome = Outcome.OK;
        } catch (CompletionException e) {
            Throwable cause = e.getCause();
            error = String.valueOf(cause);
            if (cause instanceof KvorumException k && k.isNotEnoughReplicas()) {
                outcome = Outcome.MAYBE_BEFORE_ANSWER;
            } else if (cause instanceof KvorumException k && k.isOverloaded()) {
                outcome = Outcome.NO_EFFECT;
            } else if (cause instanceof KvorumException k) {
                throw new AssertionError(type + " " + key + " via " + nodeId + " answered " + k.getMessage(), k);
            } else if (cause instanceof ConnectException) {
                outcome = Outcome.NO_EFFECT;
            } else {
                outcome = Outcome.MAYBE_ANY_TIME;
            }
            if (type == Type.GET) {
                value = null;
            }
        }
        Op op = new Op(clientId, nodeId, type, key, value, outcome, invokeNanos, System.nanoTime(),
                invokeMillis, System.currentTimeMillis(), error);
        add(op);
        return op;
    }

    public synchronized void add(Op op) {
        ops.add(op);
    }

    public synchronized List<Op> ops() {
        return List.copyOf(ops);
    }

    /** Counts by type and outcome, for the test's report line. */
    public synchronized String summary() {
        StringBuilder sb = new StringBuilder(ops.size() + " ops:");
        for (Type t : Type.values()) {
            for (Outcome o : Outcome.values()) {
                long n = ops.stream().filter(op -> op.type() == t && op.outcome() == o).count();
                if (n > 0) {
                    sb.append(' ').append(t).append('/').append(o).append('=').append(n);
                }
            }
        }
        return sb.toString();
    }
}
