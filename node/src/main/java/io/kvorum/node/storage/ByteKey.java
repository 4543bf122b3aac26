package io.kvorum.node.storage;

import java.util.Arrays;

/** Wraps a byte[] so that it can key a map: equal by content. The array must not change. */
record ByteKey(byte[] bytes) {
    @Override
    public boolean equals(Object o) {
        return o instanceof ByteKey k && Arrays.equals(bytes, k.bytes);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(bytes);
    }
}
