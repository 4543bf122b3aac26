package io.kvorum.node;

import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * HTTP/1.1 over a plain socket, for the checks a real client library hides: exact chunk framing,
 * malformed requests, pipelining, partial reads and abrupt closes. Every read has a timeout, so a
 * node that does not answer fails the test instead of hanging it.
 */
public final class RawHttp implements AutoCloseable {

    public static final Duration DEFAULT_READ_TIMEOUT = Duration.ofSeconds(20);

    private final Socket socket;
    private final InputStream in;
    private final OutputStream out;

    private RawHttp(Socket socket) throws IOException {
        this.socket = socket;
        this.in = socket.getInputStream();
        this.out = socket.getOutputStream();
    }

    public static RawHttp connect(InetSocketAddress address) throws IOException {
        return connect(address, DEFAULT_READ_TIMEOUT);
    }

    public static RawHttp connect(InetSocketAddress address, Duration readTimeout) throws IOException {
        Socket socket = new Socket();
        try {
            socket.connect(address, 5000);
            socket.setSoTimeout((int) readTimeout.toMillis());
            return new RawHttp(socket);
        } catch (IOException e) {
            socket.close();
            throw e;
        }
    }

    /** Takes over a socket the caller connected (e.g. with its own buffer sizes). */
    public static RawHttp wrap(Socket socket) throws IOException {
        return new RawHttp(socket);
    }

    public Socket socket() {
        return socket;
    }

    public InputStream in() {
        return in;
    }

    public void write(String ascii) throws IOException {
        write(ascii.getBytes(StandardCharsets.ISO_8859_1));
    }

    public void write(byte[] bytes) throws IOException {
        out.write(bytes);
        out.flush();
    }

    /** Reads one response to a request that was not HEAD. */
    public Response readResponse() throws IOException {
        return readResponse(false);
    }

    /**
     * Reads one response: status line, headers, and a body framed by Content-Length, by chunks
     * (kept one by one in {@link Response#chunks()}), or by the end of the connection.
     */
    public Response readResponse(boolean toHead) throws IOException {
        Head head = readHead();
        byte[] body;
        List<byte[]> chunks = null;
        String length = head.header("content-length");
        String encoding = head.header("transfer-encoding");
        if (toHead || head.status() == 204 || head.status() == 304 || head.status() / 100 == 1) {
            body = new byte[0];
        } else if (encoding != null && encoding.toLowerCase(Locale.ROOT).contains("chunked")) {
            chunks = readChunks();
            ByteArrayOutputStream all = new ByteArrayOutputStream();
            for (byte[] c : chunks) {
                all.writeBytes(c);
            }
            body = all.toByteArray();
        } else if (length != null) {
            body = readExactly(Integer.parseInt(length.trim()));
        } else {
            body = in.readAllBytes();
        }
        return new Response(head.status(), head.headers(), body, chunks);
    }

    /** Reads the status line and headers only; the body is left on the socket. */
    public Head readHead() throws IOException {
        String statusLine = readLine();
        String[] parts = statusLine.split(" ", 3);
        if (parts.length < 2 || !parts[0].startsWith("HTTP/1.")) {
            throw new IOException("not an HTTP/1.x status line: '" + statusLine + "'");
        }
        Map<String, String> headers = new LinkedHashMap<>();
        for (String line = readLine(); !line.isEmpty(); line = readLine()) {
            int colon = line.indexOf(':');
            if (colon > 0) {
                headers.merge(line.substring(0, colon).trim().toLowerCase(Locale.ROOT),
                        line.substring(colon + 1).trim(), (a, b) -> a + ", " + b);
            }
        }
        return new Head(Integer.parseInt(parts[1]), headers);
    }

    private List<byte[]> readChunks() throws IOException {
        List<byte[]> chunks = new ArrayList<>();
        while (true) {
            String sizeLine = readLine();
            int semicolon = sizeLine.indexOf(';');
            int size = Integer.parseInt((semicolon < 0 ? sizeLine : sizeLine.substring(0, semicolon)).trim(), 16);
            if (size == 0) {
                while (!readLine().isEmpty()) {
                    // trailers: none expected, skipped
                }
                return chunks;
            }
            chunks.add(readExactly(size));
            if (!readLine().isEmpty()) {
                throw new IOException("chunk of " + size + " bytes not followed by CRLF");
            }
        }
    }

    public byte[] readExactly(int n) throws IOException {
        byte[] bytes = in.readNBytes(n);
        if (bytes.length < n) {
            throw new EOFException("connection closed after " + bytes.length + " of " + n + " bytes");
        }
        return bytes;
    }

    /** Everything until the node closes the connection. */
    public byte[] readToEnd() throws IOException {
        return in.readAllBytes();
    }

    /** One CRLF- (or LF-) terminated line, without its terminator. */
    public String readLine() throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        while (true) {
            int b = in.read();
            if (b < 0) {
                throw new EOFException("connection closed mid-line after '" + line.toString(StandardCharsets.ISO_8859_1) + "'");
            }
            if (b == '\n') {
                return line.toString(StandardCharsets.ISO_8859_1);
            }
            if (b != '\r') {
                line.write(b);
            }
        }
    }

    /**
     * True when the node closes the connection (end of stream or reset) before the read timeout;
     * any bytes still arriving are discarded.
     */
    public boolean closedByPeer() throws IOException {
        byte[] buffer = new byte[8192];
        try {
            while (in.read(buffer) >= 0) {
                // discard
            }
            return true;
        } catch (SocketTimeoutException e) {
            return false;
        } catch (IOException e) {
            return true; // connection reset
        }
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }

    /** Opens the i-th connection of {@link #abandonAll} and sends its request. */
    @FunctionalInterface
    public interface Opener {
        RawHttp open(int i) throws IOException;
    }

    /**
     * Clients that go away at different points of a streamed answer: one connection per element
     * of {@code readBytes}, which says how much each reads before leaving (-1: not even the head,
     * 0: the head only, n: the head and n bytes of the body, which must answer 200). All stay open
     * until the last has read its part, then all close at once.
     */
    public static void abandonAll(int[] readBytes, Opener opener) throws IOException {
        List<RawHttp> clients = new ArrayList<>();
        try {
            for (int i = 0; i < readBytes.length; i++) {
                RawHttp raw = opener.open(i);
                clients.add(raw);
                if (readBytes[i] >= 0) {
                    Head head = raw.readHead();
                    if (head.status() != 200) {
                        throw new IOException("expected 200, got " + head.status());
                    }
                    raw.readExactly(readBytes[i]);
                }
            }
        } finally {
            for (RawHttp raw : clients) {
                raw.close();
            }
        }
    }

    /** A status line and its headers, names in lower case. */
    public record Head(int status, Map<String, String> headers) {
        public String header(String name) {
            return headers.get(name.toLowerCase(Locale.ROOT));
        }
    }

    /** A whole response; {@code chunks} is null unless the body was chunked. */
    public record Response(int status, Map<String, String> headers, byte[] body, List<byte[]> chunks) {
        public String header(String name) {
            return headers.get(name.toLowerCase(Locale.ROOT));
        }

        public String bodyText() {
            return new String(body, StandardCharsets.UTF_8);
        }
    }
}
