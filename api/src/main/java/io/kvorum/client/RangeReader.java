package io.kvorum.client;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Iterator;
import java.util.Locale;
import java.util.NoSuchElementException;

/**
 * Reads a range answer (SPEC §4) entry by entry as the node streams it. Each HTTP chunk is one
 * entry, {@code <key>\n<value>}, and values may contain newlines, so the chunk boundaries are the
 * framing. {@code java.net.http} hides them, hence this reader speaks HTTP/1.1 over its own socket
 * for this one response shape: a status line, headers, and a chunked body.
 *
 * <p>A stream that ends without its terminating zero-length chunk (a node failed mid-range) raises
 * {@link TruncatedRangeException}, so a short answer is never mistaken for a complete one. Not
 * thread-safe. Close it to stop early; the node then stops reading.
 */
public final class RangeReader implements AutoCloseable, Iterable<RangeReader.Entry> {

    private static final int MAX_LINE = 16 * 1024;

    private final Socket socket;
    private final InputStream in;
    private boolean finished;

    private RangeReader(Socket socket, InputStream in) {
        this.socket = socket;
        this.in = in;
    }

    /** Sends the request and reads the status and headers; the body is read by {@link #next()}. */
    static RangeReader open(URI uri, int timeoutMillis) throws IOException {
        Socket socket = new Socket();
        try {
            int port = uri.getPort() > 0 ? uri.getPort() : 80;
            socket.connect(new InetSocketAddress(uri.getHost(), port), timeoutMillis);
            socket.setSoTimeout(timeoutMillis);
            OutputStream out = socket.getOutputStream();
            String target = uri.getRawPath() + (uri.getRawQuery() != null ? "?" + uri.getRawQuery() : "");
            out.write(("GET " + target + " HTTP/1.1\r\nHost: " + uri.getHost() + ":" + port
                    + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = new BufferedInputStream(socket.getInputStream(), 64 * 1024);
            RangeReader reader = new RangeReader(socket, in);
            reader.readHead();
            return reader;
        } catch (IOException | RuntimeException e) {
            socket.close();
            throw e;
        }
    }

    private void readHead() throws IOException {
        String status = readLine();
        String[] parts = status.split(" ", 3);
        if (parts.length < 2 || !parts[0].startsWith("HTTP/1.")) {
            throw new IOException("not an HTTP/1.1 answer: " + status);
        }
        int code = Integer.parseInt(parts[1]);
        boolean chunked = false;
        long contentLength = -1;
        for (String line = readLine(); !line.isEmpty(); line = readLine()) {
            int colon = line.indexOf(':');
            if (colon < 0) {
                continue;
            }
            String name = line.substring(0, colon).trim().toLowerCase(Locale.ROOT);
            String value = line.substring(colon + 1).trim();
            if (name.equals("transfer-encoding") && value.toLowerCase(Locale.ROOT).contains("chunked")) {
                chunked = true;
            } else if (name.equals("content-length")) {
                contentLength = Long.parseLong(value);
            }
        }
        if (code != 200) {
            byte[] body = contentLength >= 0 ? in.readNBytes((int) Math.min(contentLength, 64 * 1024)) : new byte[0];
            throw KvorumException.of(code, body);
        }
        if (!chunked) {
            throw new IOException("range answer is not chunked");
        }
    }

    /** The next entry, or null after the last one. */
    public Entry next() throws IOException {
        if (finished) {
            return null;
        }
        String sizeLine;
        try {
            sizeLine = readLine();
        } catch (EOFException e) {
            throw new TruncatedRangeException();
        }
        int semicolon = sizeLine.indexOf(';');
        int size;
        try {
            size = Integer.parseInt((semicolon < 0 ? sizeLine : sizeLine.substring(0, semicolon)).trim(), 16);
        } catch (NumberFormatException e) {
            throw new IOException("bad chunk size line: " + sizeLine);
        }
        if (size == 0) {
            finished = true;
            return null;
        }
        byte[] chunk = in.readNBytes(size);
        if (chunk.length < size || !readLine().isEmpty()) {
            throw new TruncatedRangeException();
        }
        int newline = indexOf(chunk, (byte) '\n');
        if (newline < 0) {
            throw new IOException("range chunk without a key separator");
        }
        return new Entry(Arrays.copyOf(chunk, newline), Arrays.copyOfRange(chunk, newline + 1, chunk.length));
    }

    private String readLine() throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        while (true) {
            int b = in.read();
            if (b < 0) {
                throw new EOFException("connection closed");
            }
            if (b == '\n') {
                break;
            }
            if (b != '\r') {
                if (line.size() >= MAX_LINE) {
                    throw new IOException("line too long");
                }
                line.write(b);
            }
        }
        return line.toString(StandardCharsets.ISO_8859_1);
    }

    private static int indexOf(byte[] bytes, byte b) {
        for (int i = 0; i < bytes.length; i++) {
            if (bytes[i] == b) {
                return i;
            }
        }
        return -1;
    }

    /**
     * Iterates the remaining entries; I/O failures, truncation included, surface as
     * {@link java.io.UncheckedIOException}.
     */
    @Override
    public Iterator<Entry> iterator() {
        return new Iterator<>() {
            private Entry next;

            @Override
            public boolean hasNext() {
                if (next == null) {
                    try {
                        next = RangeReader.this.next();
                    } catch (IOException e) {
                        throw new java.io.UncheckedIOException(e);
                    }
                }
                return next != null;
            }

            @Override
            public Entry next() {
                if (!hasNext()) {
                    throw new NoSuchElementException();
                }
                Entry e = next;
                next = null;
                return e;
            }
        };
    }

    /** Closes the connection; the node stops streaming. */
    @Override
    public void close() throws IOException {
        socket.close();
    }

    /** One entry of a range. */
    public record Entry(byte[] key, byte[] value) {

        public String keyString() {
            return new String(key, StandardCharsets.UTF_8);
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Entry e && Arrays.equals(key, e.key) && Arrays.equals(value, e.value);
        }

        @Override
        public int hashCode() {
            return 31 * Arrays.hashCode(key) + Arrays.hashCode(value);
        }

        @Override
        public String toString() {
            return keyString() + " (" + value.length + " bytes)";
        }
    }

    /** The range stream ended without its terminating chunk: a node failed mid-range. */
    public static final class TruncatedRangeException extends IOException {
        public TruncatedRangeException() {
            super("range stream was truncated: a node failed before it ended");
        }
    }
}
