package io.kvorum.node.http;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Decodes a query string as {@code application/x-www-form-urlencoded}, strictly: {@code +} is a
 * space, {@code %XX} a byte, and any malformed percent-escape or any name or value that is not
 * valid UTF-8 is a {@link BadRequestException}. (Netty's {@code QueryStringDecoder} replaces bad
 * UTF-8 with U+FFFD, which would silently turn two different keys into one.)
 */
final class QueryDecoder {

    private QueryDecoder() {
    }

    /** One {@code name=value} pair; the value's bytes are valid UTF-8. */
    record Param(String name, byte[] value) {
    }

    /** The pairs of {@code rawQuery} (the part after '?', possibly null) in order; empty segments are skipped. */
    static List<Param> decode(String rawQuery) {
        List<Param> params = new ArrayList<>();
        if (rawQuery == null || rawQuery.isEmpty()) {
            return params;
        }
        for (String segment : rawQuery.split("&", -1)) {
            if (segment.isEmpty()) {
                continue;
            }
            int eq = segment.indexOf('=');
            String rawName = eq < 0 ? segment : segment.substring(0, eq);
            String rawValue = eq < 0 ? "" : segment.substring(eq + 1);
            byte[] nameBytes = percentDecode(rawName);
            byte[] value = percentDecode(rawValue);
            String name = utf8(nameBytes, "parameter name");
            if (!isAscii(value)) {
                utf8(value, "value of parameter '" + name + "'"); // only to refuse one that is not UTF-8
            }
            params.add(new Param(name, value));
        }
        return params;
    }

    private static byte[] percentDecode(String s) {
        if (s.indexOf('%') < 0 && s.indexOf('+') < 0) {
            return s.getBytes(StandardCharsets.ISO_8859_1); // one char per byte, as Netty read them
        }
        byte[] out = new byte[s.length()];
        int n = 0;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '+') {
                out[n++] = ' ';
            } else if (c == '%') {
                if (i + 2 >= s.length()) {
                    throw new BadRequestException("invalid percent-encoding in query: '" + s + "'");
                }
                int hi = Character.digit(s.charAt(i + 1), 16);
                int lo = Character.digit(s.charAt(i + 2), 16);
                if (hi < 0 || lo < 0) {
                    throw new BadRequestException("invalid percent-encoding in query: '" + s + "'");
                }
                out[n++] = (byte) (hi << 4 | lo);
                i += 2;
            } else {
                // Netty hands over the request line one char per byte (ISO-8859-1), so a raw
                // non-ASCII byte, which some clients send unescaped, casts back to itself.
                out[n++] = (byte) c;
            }
        }
        return java.util.Arrays.copyOf(out, n);
    }

    private static String utf8(byte[] bytes, String what) {
        if (isAscii(bytes)) {
            return new String(bytes, StandardCharsets.ISO_8859_1); // the usual case, without a decoder
        }
        try {
            return StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes))
                    .toString();
        } catch (CharacterCodingException e) {
            throw new BadRequestException(what + " is not valid UTF-8");
        }
    }

    private static boolean isAscii(byte[] bytes) {
        for (byte b : bytes) {
            if (b < 0) {
                return false;
            }
        }
        return true;
    }
}
