package io.kvorum.perf.ycsb;

import io.kvorum.client.KvorumClient;
import io.kvorum.client.KvorumClient.Options;
import io.kvorum.client.KvorumException;
import io.kvorum.client.RangeReader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.Vector;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import site.ycsb.ByteArrayByteIterator;
import site.ycsb.ByteIterator;
import site.ycsb.DB;
import site.ycsb.DBException;
import site.ycsb.Status;

/**
 * YCSB's view of Kvorum: each YCSB record is one Kvorum entry.
 *
 * <ul>
 *   <li>Key: {@code <table>:<key>}, so a table is a key prefix and a scan is a range read.</li>
 *   <li>Value: the record's fields in the {@link FieldCodec} format.</li>
 *   <li>{@code read} returns the requested fields (all when {@code fields} is null); a requested
 *       field the record lacks is left out.</li>
 *   <li>{@code update} merges the given fields into the stored record: it reads the record, replaces
 *       the given fields and writes the whole record back (YCSB's update semantic, which Kvorum has no
 *       single request for). An absent record is {@code NOT_FOUND} and nothing is written, so lost
 *       records show up in the report instead of being recreated with some fields. The read and
 *       the write are two requests: two concurrent updates of one record resolve last-write-wins,
 *       and the fields of the loser are lost.</li>
 *   <li>{@code insert} writes the record whole; {@code delete} deletes it.</li>
 *   <li>{@code scan} reads the range from {@code <table>:<startkey>} to the end of the table's
 *       prefix, stops after {@code recordcount} records and closes the stream. Ranges ignore
 *       {@code ack}/{@code from} (docs/http-api.md (ranges)).</li>
 * </ul>
 *
 * <p>Outcomes: {@code OK}; {@code NOT_FOUND} for an absent record; {@code SERVICE_UNAVAILABLE} for
 * 503 (the node shed the request); {@code ERROR} for anything else (504, other statuses, I/O
 * failures, an undecodable record), whose reason goes to the {@link ErrorLog}.
 *
 * <p>Properties: {@code kvorum.urls} (required: comma-separated node URLs; each instance, that is
 * each YCSB client thread, uses the next one in turn), {@code kvorum.ack} and {@code kvorum.from}
 * (optional; the node's defaults otherwise), {@code kvorum.timeout.ms} (per request, default
 * 10000), {@code kvorum.ca}, {@code kvorum.token.file} and {@code kvorum.allow.insecure} for a secured
 * cluster ({@link ClientSecurity}).
 * The {@link KvorumClient}s are shared by every instance of the process
 * ({@link SharedClients}).
 */
public class KvorumDB extends DB {

    public static final String URLS = "kvorum.urls";
    public static final String ACK = "kvorum.ack";
    public static final String FROM = "kvorum.from";
    public static final String TIMEOUT_MS = "kvorum.timeout.ms";
    static final long DEFAULT_TIMEOUT_MS = 10_000;

    private static final ErrorLog errors = new ErrorLog(TimeUnit.SECONDS.toNanos(10), System::nanoTime);

    private KvorumClient client;
    private Options options;

    @Override
    public void init() throws DBException {
        Properties p = getProperties();
        try {
            String urls = p.getProperty(URLS, "").trim();
            if (urls.isEmpty()) {
                throw new DBException(URLS + " is not set: give the node URLs, comma-separated");
            }
            List<URI> uris = Arrays.stream(urls.split(",")).map(String::trim).filter(s -> !s.isEmpty())
                    .map(URI::create).toList();
            options = Options.quorum(intProperty(p, ACK, 0), intProperty(p, FROM, 0));
            Duration timeout = Duration.ofMillis(intProperty(p, TIMEOUT_MS, (int) DEFAULT_TIMEOUT_MS));
            client = SharedClients.acquire(uris, timeout, ClientSecurity.from(p));
        } catch (IllegalArgumentException | IllegalStateException e) {
            throw new DBException("kvorum: " + e.getMessage(), e);
        }
    }

    @Override
    public void cleanup() {
        if (client != null) {
            client = null;
            SharedClients.release();
        }
    }

    @Override
    public Status read(String table, String key, Set<String> fields, Map<String, ByteIterator> result) {
        try {
            Optional<byte[]> value = client.get(entityKey(table, key), options).join();
            if (value.isEmpty()) {
                return Status.NOT_FOUND;
            }
            copyFields(FieldCodec.decode(value.get()), fields, result);
            return Status.OK;
        } catch (RuntimeException e) {
            return failed("read", e);
        }
    }

    @Override
    public Status scan(String table, String startkey, int recordcount, Set<String> fields,
                       Vector<HashMap<String, ByteIterator>> result) {
        // ';' follows ':' in ASCII, so [table:, table;) is exactly the keys with the table's prefix.
        try (RangeReader range = client.range(entityKey(table, startkey), table + ";")) {
            RangeReader.Entry e;
            for (int read = 0; read < recordcount && (e = range.next()) != null; read++) {
                HashMap<String, ByteIterator> record = new HashMap<>();
                copyFields(FieldCodec.decode(e.value()), fields, record);
                result.add(record);
            }
            return Status.OK;
        } catch (IOException | RuntimeException e) {
            return failed("scan", e);
        }
    }

    @Override
    public Status update(String table, String key, Map<String, ByteIterator> values) {
        String k = entityKey(table, key);
        try {
            Optional<byte[]> stored = client.get(k, options).join();
            if (stored.isEmpty()) {
                return Status.NOT_FOUND;
            }
            Map<String, byte[]> record = FieldCodec.decode(stored.get());
            record.putAll(bytesOf(values));
            client.put(k, FieldCodec.encode(record), options).join();
            return Status.OK;
        } catch (RuntimeException e) {
            return failed("update", e);
        }
    }

    @Override
    public Status insert(String table, String key, Map<String, ByteIterator> values) {
        try {
            client.put(entityKey(table, key), FieldCodec.encode(bytesOf(values)), options).join();
            return Status.OK;
        } catch (RuntimeException e) {
            return failed("insert", e);
        }
    }

    @Override
    public Status delete(String table, String key) {
        try {
            client.delete(entityKey(table, key), options).join();
            return Status.OK;
        } catch (RuntimeException e) {
            return failed("delete", e);
        }
    }

    static String entityKey(String table, String key) {
        return table + ":" + key;
    }

    private static void copyFields(Map<String, byte[]> record, Set<String> fields, Map<String, ByteIterator> out) {
        if (fields == null) {
            record.forEach((name, value) -> out.put(name, new ByteArrayByteIterator(value)));
        } else {
            for (String name : fields) {
                byte[] value = record.get(name);
                if (value != null) {
                    out.put(name, new ByteArrayByteIterator(value));
                }
            }
        }
    }

    private static Map<String, byte[]> bytesOf(Map<String, ByteIterator> values) {
        Map<String, byte[]> bytes = new LinkedHashMap<>(values.size() * 2);
        values.forEach((name, value) -> bytes.put(name, value.toArray()));
        return bytes;
    }

    /** Maps a failure to its status (once, here) and hands its reason to the rate-limited log. */
    private static Status failed(String operation, Throwable failure) {
        Throwable cause = failure instanceof CompletionException && failure.getCause() != null
                ? failure.getCause() : failure;
        if (cause instanceof UncheckedIOException && cause.getCause() != null) {
            cause = cause.getCause();
        }
        Status status;
        String kind;
        if (cause instanceof KvorumException ke) {
            status = ke.isOverloaded() ? Status.SERVICE_UNAVAILABLE : Status.ERROR;
            kind = operation + ": HTTP " + ke.status();
        } else {
            status = Status.ERROR;
            kind = operation + ": " + cause.getClass().getSimpleName();
        }
        errors.failed(kind, reason(cause));
        return status;
    }

    /** The first message in the cause chain (java.net.http's ConnectException has none of its own). */
    private static String reason(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t.getMessage() != null && !t.getMessage().isBlank()) {
                return t == failure ? t.getMessage() : failure.getClass().getSimpleName() + ": " + t.getMessage();
            }
        }
        return failure.toString();
    }

    private static int intProperty(Properties p, String name, int absent) {
        String v = p.getProperty(name);
        if (v == null || v.isBlank()) {
            return absent;
        }
        try {
            int n = Integer.parseInt(v.trim());
            if (n <= 0) {
                throw new NumberFormatException();
            }
            return n;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + " must be a positive integer, not '" + v + "'");
        }
    }
}
