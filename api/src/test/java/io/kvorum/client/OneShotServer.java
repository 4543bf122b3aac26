package io.kvorum.client;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * A stand-in node on 127.0.0.1 for one connection: it reads the request head, answers with
 * exactly the bytes it was given (so a test controls every chunk, and can end the stream early),
 * then closes the connection.
 */
final class OneShotServer implements AutoCloseable {

    private final ServerSocket socket;
    private final CompletableFuture<String> requestHead = new CompletableFuture<>();

    private OneShotServer(byte[] answer) throws IOException {
        socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        Thread t = new Thread(() -> serve(answer), "one-shot-server");
        t.setDaemon(true);
        t.start();
    }

    static OneShotServer answering(String answer) throws IOException {
        return new OneShotServer(answer.getBytes(StandardCharsets.ISO_8859_1));
    }

    URI base() {
        return URI.create("http://127.0.0.1:" + socket.getLocalPort());
    }

    /** The request line and headers the client sent, up to the blank line. */
    String requestHead() throws Exception {
        return requestHead.get(10, TimeUnit.SECONDS);
    }

    private void serve(byte[] answer) {
        try (Socket s = socket.accept()) {
            requestHead.complete(readHead(s.getInputStream()));
            s.getOutputStream().write(answer);
            s.getOutputStream().flush();
        } catch (IOException e) {
            requestHead.completeExceptionally(e);
        }
    }

    private static String readHead(InputStream in) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        int matched = 0;
        byte[] end = {'\r', '\n', '\r', '\n'};
        while (matched < end.length) {
            int b = in.read();
            if (b < 0) {
                break;
            }
            head.write(b);
            matched = b == end[matched] ? matched + 1 : (b == '\r' ? 1 : 0);
        }
        return head.toString(StandardCharsets.ISO_8859_1);
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
