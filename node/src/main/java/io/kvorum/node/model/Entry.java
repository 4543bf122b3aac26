package io.kvorum.node.model;

/** One stored entry: a key and its record, as storage cursors, range streams and anti-entropy carry it. */
public record Entry(byte[] key, Record record) {
}
