package io.kvorum.node.transport.grpc;

import java.io.Closeable;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;

/**
 * Just enough HTTP/2 (RFC 9113) over a plain socket to see how the gRPC port treats a connection:
 * the client preface and an empty SETTINGS frame on connect, then frames read one at a time.
 */
final class RawHttp2 implements Closeable {

    static final int SETTINGS = 0x4;
    static final int PING = 0x6;
    static final int GOAWAY = 0x7;
    static final int ACK = 0x1;

    /** One frame: its type, flags and payload. */
    record Frame(int type, int flags, byte[] payload) {
        boolean isAck() {
            return (flags & ACK) != 0;
        }
    }

    private final Socket socket;
    private final OutputStream out;
    private final DataInputStream in;

    private RawHttp2(Socket socket) throws IOException {
        this.socket = socket;
        this.out = socket.getOutputStream();
        this.in = new DataInputStream(socket.getInputStream());
    }

    /** Connects to {@code port} on the loopback address and opens HTTP/2 (preface and SETTINGS). */
    static RawHttp2 connect(int port) throws IOException {
        Socket socket = new Socket("127.0.0.1", port);
        socket.setSoTimeout(10_000);
        RawHttp2 h2 = new RawHttp2(socket);
        h2.out.write("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        h2.out.write(new byte[] {0, 0, 0, SETTINGS, 0, 0, 0, 0, 0}); // an empty SETTINGS frame
        h2.out.flush();
        return h2;
    }

    /** The next frame; {@link EOFException} when the server closed the connection. */
    Frame read() throws IOException {
        int length = (in.readUnsignedByte() << 16) | in.readUnsignedShort();
        int type = in.readUnsignedByte();
        int flags = in.readUnsignedByte();
        in.readInt(); // stream id
        return new Frame(type, flags, in.readNBytes(length));
    }

    /**
     * Whether the server serves this connection: it answers a PING (true), rather than sending
     * GOAWAY or closing the connection first (false).
     */
    boolean served() throws IOException {
        out.write(new byte[] {0, 0, 8, PING, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8});
        out.flush();
        try {
            while (true) {
                Frame f = read();
                if (f.type() == PING && f.isAck()) {
                    return true;
                }
                if (f.type() == GOAWAY) {
                    return false;
                }
            }
        } catch (EOFException | SocketException closed) {
            return false;
        }
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
