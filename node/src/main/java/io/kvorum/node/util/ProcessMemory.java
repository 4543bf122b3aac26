package io.kvorum.node.util;

import io.netty.util.internal.PlatformDependent;

/**
 * The memory the node's bounds are fractions of: the smaller of the heap and the direct memory,
 * since a value passes through both (received into direct buffers, copied into the heap, copied
 * back into direct buffers to be sent to a client or a replica).
 */
public final class ProcessMemory {

    private ProcessMemory() {
    }

    /** The smaller of {@code -Xmx} and Netty's limit on direct memory, in bytes. */
    public static long smallerOfHeapAndDirect() {
        return Math.min(Runtime.getRuntime().maxMemory(), PlatformDependent.maxDirectMemory());
    }
}
