package io.kvorum.node.storage;

import io.kvorum.node.model.Record;

/** A change {@link LevelDbStore#apply} can make. */
public sealed interface Mutation permits Mutation.Put, Mutation.Purge {
    byte[] key();

    /** Store {@code record} if it is newer than what is stored. */
    record Put(byte[] key, Record record) implements Mutation {
    }

    /** Replace {@code expected} by {@code replacement} (null: delete the key) if it is still stored. */
    record Purge(byte[] key, Record expected, Record replacement) implements Mutation {
    }
}
