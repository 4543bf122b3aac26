package io.kvorum.node.coordinator;

import io.kvorum.node.storage.EntryStream;

/** Opens the raw entry stream (tombstones and expired records included) of a key range. */
@FunctionalInterface
public interface RangeSource {

    /** Entries with {@code start <= key < end}; {@code end == null} means to the last key. */
    EntryStream open(byte[] start, byte[] end);
}
