package io.kvorum.node.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.stream.Stream;
import org.iq80.leveldb.DB;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A database whose log ends in a record torn by a kill opens, with every complete write; one whose
 * log is damaged before its end is refused, since opening it would drop acknowledged writes.
 */
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

    @Test
    void aTornRecordFollowedByTheWritersPreallocatedZerosIsDroppedToo() throws Exception {
        try (DB db = LevelDbOpener.open(dir, 1 << 20, 1 << 20)) {
            db.put(bytes("k1"), bytes("v1"));
        }
        byte[] torn = {0x12, 0x34, 0x56, 0x78, 10, 0, 1, 'k', '3'};
        Files.write(log(), torn, StandardOpenOption.APPEND);
        Files.write(log(), new byte[40_000], StandardOpenOption.APPEND); // into the next block

        try (DB db = LevelDbOpener.open(dir, 1 << 20, 1 << 20)) {
            assertThat(db.get(bytes("k1"))).isEqualTo(bytes("v1"));
        }
    }

    @Test
    void aLogDamagedBeforeItsEndIsRefusedAndLeftAsItIs() throws Exception {
        byte[] value = new byte[1000];
        try (DB db = LevelDbOpener.open(dir, 4 << 20, 4 << 20)) {
            for (int i = 0; i < 200; i++) { // about 200 KB: seven blocks of the log
                db.put(bytes("k" + i), value);
            }
        }
        Path log = log();
        byte[] before = Files.readAllBytes(log);
        byte[] damaged = before.clone();
        for (int i = 70_000; i < 70_016; i++) { // in the third block: records follow in the next ones
            damaged[i] ^= (byte) 0x5a;
        }
        Files.write(log, damaged);

        assertThatThrownBy(() -> LevelDbOpener.open(dir, 4 << 20, 4 << 20))
                .isInstanceOf(DamagedStoreException.class)
                .hasMessageContaining(log.getFileName() + " is damaged at byte")
                .hasMessageContaining("would drop acknowledged writes");
        assertThat(Files.readAllBytes(log)).as("the log, for repair-storage to salvage").isEqualTo(damaged);
        assertThat(LevelDbLogScan.damageFollowedByRecords(before)).as("the log before the damage").isEqualTo(-1);
    }

    @Test
    void damageInTheLastBlockWithWholeRecordsAfterItIsRefusedToo() throws Exception {
        try (DB db = LevelDbOpener.open(dir, 1 << 20, 1 << 20)) {
            db.put(bytes("k1"), bytes("a value of the first write"));
            db.put(bytes("k2"), bytes("v2"));
            db.put(bytes("k3"), bytes("v3"));
        }
        byte[] log = Files.readAllBytes(log());
        log[20] ^= 1; // in the first record's bytes: its header still frames it
        Files.write(log(), log);

        assertThatThrownBy(() -> LevelDbOpener.open(dir, 1 << 20, 1 << 20))
                .isInstanceOf(DamagedStoreException.class).hasMessageContaining("is damaged at byte 0 of");
    }

    private Path log() throws Exception {
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(p -> p.getFileName().toString().endsWith(".log")).findFirst().orElseThrow();
        }
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
