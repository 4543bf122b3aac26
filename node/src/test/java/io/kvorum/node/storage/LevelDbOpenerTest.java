package io.kvorum.node.storage;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.stream.Stream;
import org.iq80.leveldb.DB;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A database whose log ends in a record torn by a kill opens, with every complete write. */
class LevelDbOpenerTest {

    @TempDir
    Path dir;

    @Test
    void aTornRecordAtTheEndOfTheLogIsDroppedAndTheRestKept() throws Exception {
        try (DB db = LevelDbOpener.open(dir, 1 << 20, 1 << 20)) {
            db.put(bytes("k1"), bytes("v1"));
            db.put(bytes("k2"), bytes("v2"));
        }
        Path log;
        try (Stream<Path> files = Files.list(dir)) {
            log = files.filter(p -> p.getFileName().toString().endsWith(".log")).findFirst().orElseThrow();
        }
        // A full record's header (checksum, length 10, type FULL) whose payload was cut short.
        byte[] torn = {0x12, 0x34, 0x56, 0x78, 10, 0, 1, 'k', '3'};
        Files.write(log, torn, StandardOpenOption.APPEND);

        try (DB db = LevelDbOpener.open(dir, 1 << 20, 1 << 20)) {
            assertThat(db.get(bytes("k1"))).isEqualTo(bytes("v1"));
            assertThat(db.get(bytes("k2"))).isEqualTo(bytes("v2"));
            assertThat(db.get(bytes("k3"))).isNull();
        }
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
