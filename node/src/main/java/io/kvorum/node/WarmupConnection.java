package io.kvorum.node;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

/**
 * One keep-alive HTTP/1.1 connection to a node of the warm-up rig ({@link RequestPathWarmup}): a
 * blocking socket that sends a request and reads its whole answer. It understands exactly what the
 * node answers to entity requests (a status line, headers, a {@code Content-Length} body) and
 * throws on anything else, which ends the warm-up: the rig is a node of this build, not a server
 * of unknown origin.
 */
final class WarmupConnection implements Closeable {

    private static final int MAX_LINE = 8192;

    private final Socket socket;
    private final InputStream in;
    private final OutputStream out;
    private final String host;

    WarmupConnection(InetSocketAddress address, int timeoutMillis) throws IOException {
        socket = new Socket();
        try {
            socket.setTcpNoDelay(true);
            socket.setSoTimeout(timeoutMillis);
            socket.connect(address, timeoutMillis);
            in = new BufferedInputStream(socket.getInputStream());
            out = socket.getOutputStream();
        } catch (IOException e) {
            socket.close();
            throw e;
        }
        host = address.getHostString() + ":" + address.getPort();
    }

    /**
     * Sends {@code method target} with {@code body} (null: none) and reads the answer.
     *
     * @return the status code
     * @throws IOException when the connection fails, or the answer is not framed as expected
     */
    int exchange(String method, String target, byte[] body) throws IOException {
        StringBuilder head = new StringBuilder(128).append(method).append(' ').append(target).append(" HTTP/1.1\r\n")
                .append("Host: ").append(host).append("\r\n");
        if (body != null) {
            head.append("Content-Length: ").append(body.length).append("\r\n");
        }
        out.write(head.append("\r\n").toString().getBytes(StandardCharsets.US_ASCII));
        if (body != null) {
            out.write(body);
        }
        out.flush();
        String status = readLine();
        if (!status.startsWith("HTTP/1.1 ") || status.length() < 12) {
            throw new IOException("not an HTTP/1.1 status line: " + status);
        }
        int code = Integer.parseInt(status.substring(9, 12));
        long length = -1;
        for (String line = readLine(); !line.isEmpty(); line = readLine()) {
            int colon = line.indexOf(':');
            if (colon > 0 && line.substring(0, colon).trim().toLowerCase(Locale.ROOT).equals("content-length")) {
                length = Long.parseLong(line.substring(colon + 1).trim());
            }
        }
        if (length < 0) {
            throw new IOException("an answer (" + code + ") without Content-Length");
        }
        in.skipNBytes(length); // throws EOFException when the body is cut short
        return code;
    }

    private String readLine() throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream(64);
        for (int b = in.read(); b != '\n'; b = in.read()) {
            if (b < 0) {
                throw new IOException("the connection closed in the middle of an answer");
            }
            if (b != '\r') {
                line.write(b);
            }
            if (line.size() > MAX_LINE) {
                throw new IOException("an answer line longer than " + MAX_LINE + " bytes");
            }
        }
        return line.toString(StandardCharsets.US_ASCII);
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
