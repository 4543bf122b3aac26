package io.kvorum.node.storage;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import java.util.zip.CRC32C;

/**
 * Tells a log torn by a kill from a log damaged in its middle, in LevelDB's log format (blocks of
 * 32 KiB; each record a header of a masked CRC-32C, a length and a type, then its bytes; zeros
 * where the writer preallocated). Opening without paranoid checks drops the damaged part and goes
 * on with the records after it: for a torn tail, the one write that never returned; for damage
 * in the middle, writes that were acknowledged. So only the first may be opened that way.
 */
final class LevelDbLogScan {

    private static final int BLOCK = 32 * 1024;
    private static final int HEADER = 7;
    private static final int LAST_TYPE = 4; // FULL 1, FIRST 2, MIDDLE 3, LAST 4
    private static final int MASK_DELTA = 0xa282ead8;

    private LevelDbLogScan() {
    }

    /**
     * The first of {@code dir}'s logs ({@code NNNNNN.log}) in which a whole record follows a
     * damaged one, described for an operator; null when every log is whole or damaged only at its
     * end.
     */
    static String damageBeforeTheEnd(Path dir) throws IOException {
        List<Path> logs;
        try (Stream<Path> files = Files.list(dir)) {
            logs = files.filter(f -> f.getFileName().toString().matches("\\d+\\.log")).sorted().toList();
        }
        for (Path log : logs) {
            byte[] bytes = Files.readAllBytes(log);
            long damage = damageFollowedByRecords(bytes);
            if (damage >= 0) {
                return log.getFileName() + " is damaged at byte " + damage + " of " + bytes.length
                        + ", and whole records follow";
            }
        }
        return null;
    }

    /**
     * Where the first damaged record of {@code log} starts, when a whole record follows it; -1 when
     * the log is whole or only its end is damaged. After damage the scan goes on at the next
     * block, as LevelDB's reader does.
     */
    static long damageFollowedByRecords(byte[] log) {
        long damage = -1;
        int pos = 0;
        while (pos < log.length) {
            int blockEnd = Math.min(log.length, (pos / BLOCK + 1) * BLOCK);
            if (blockEnd - pos < HEADER || isZero(log, pos, HEADER)) {
                pos = blockEnd; // a block's trailer, or a region the writer preallocated
                continue;
            }
            int length = (log[pos + 4] & 0xff) | (log[pos + 5] & 0xff) << 8;
            int type = log[pos + 6] & 0xff;
            boolean framed = type >= 1 && type <= LAST_TYPE && pos + HEADER + length <= blockEnd;
            if (!framed || storedChecksum(log, pos) != maskedCrc(log, pos + 6, 1 + length)) {
                if (damage < 0) {
                    damage = pos;
                }
                // A record whose header still frames it (damage in its bytes) is stepped over, so
                // that whole records after it in the same block count; LevelDB drops those too.
                pos = framed && damage == pos ? pos + HEADER + length : blockEnd;
                continue;
            }
            if (damage >= 0) {
                return damage;
            }
            pos += HEADER + length;
        }
        return -1;
    }

    private static boolean isZero(byte[] bytes, int from, int count) {
        for (int i = from; i < from + count; i++) {
            if (bytes[i] != 0) {
                return false;
            }
        }
        return true;
    }

    private static int storedChecksum(byte[] log, int pos) {
        return (log[pos] & 0xff) | (log[pos + 1] & 0xff) << 8 | (log[pos + 2] & 0xff) << 16 | (log[pos + 3] & 0xff) << 24;
    }

    /** LevelDB's masked CRC-32C of the type byte and the record's bytes. */
    private static int maskedCrc(byte[] bytes, int from, int count) {
        CRC32C crc = new CRC32C();
        crc.update(bytes, from, count);
        int c = (int) crc.getValue();
        return ((c >>> 15) | (c << 17)) + MASK_DELTA;
    }
}
