package io.kvorum.node.http;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.CombinedChannelDuplexHandler;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpRequestDecoder;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseEncoder;
import io.netty.handler.codec.http.HttpStatusClass;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Queue;

/**
 * Netty's HTTP/1.1 server codec, as {@link io.netty.handler.codec.http.HttpServerCodec} pairs its
 * decoder and encoder, with one rule stricter: a request with both {@code Content-Length} and
 * {@code Transfer-Encoding: chunked} fails to decode ({@link UnreadableRequestException}; answered
 * 400, the connection closed, nothing after it read). Netty's decoder would drop the length and
 * read on by the chunks, keeping the connection, which RFC 9112 §6.1 forbids: a proxy in front of
 * the node that framed the body by its length would have passed the rest as another request.
 * That rule is the decoder's hook; {@code HttpServerCodec} is final, so the pairing is repeated
 * here: each answer is encoded knowing its request's method, and the answer to a {@code HEAD}
 * has no body.
 */
final class GatewayHttpCodec extends CombinedChannelDuplexHandler<HttpRequestDecoder, HttpResponseEncoder> {

    /** The methods of the requests decoded and not yet answered, oldest first. */
    private final Queue<HttpMethod> methods = new ArrayDeque<>();

    GatewayHttpCodec(HttpDecoderConfig config) {
        init(new RequestDecoder(config), new ResponseEncoder());
    }

    private final class RequestDecoder extends HttpRequestDecoder {

        RequestDecoder(HttpDecoderConfig config) {
            super(config);
        }

        @Override
        protected void decode(ChannelHandlerContext ctx, ByteBuf buffer, List<Object> out) throws Exception {
            int before = out.size();
            super.decode(ctx, buffer, out);
            for (int i = before; i < out.size(); i++) {
                if (out.get(i) instanceof HttpRequest request) {
                    methods.add(request.method());
                }
            }
        }

        /** Thrown inside the decoder, this makes the request one that failed to decode, and the decoder drops the rest. */
        @Override
        protected void handleTransferEncodingChunkedWithContentLength(HttpMessage message) {
            throw UnreadableRequestException.lengthAndTransferEncoding();
        }
    }

    private final class ResponseEncoder extends HttpResponseEncoder {

        /** Called once for each answer's head; an interim one (100 Continue) leaves its request's method queued for the final one. */
        @Override
        protected boolean isContentAlwaysEmpty(HttpResponse response) {
            if (response.status().codeClass() == HttpStatusClass.INFORMATIONAL) {
                return super.isContentAlwaysEmpty(response);
            }
            HttpMethod method = methods.poll();
            return HttpMethod.HEAD.equals(method) || super.isContentAlwaysEmpty(response);
        }
    }
}
