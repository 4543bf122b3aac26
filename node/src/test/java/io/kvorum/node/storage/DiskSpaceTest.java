package io.kvorum.node.storage;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/** The reserve of {@code --min-free-disk}, on a fake reading of the free space. */
class DiskSpaceTest {

    private final AtomicLong free = new AtomicLong(1000);
    private final DiskSpace disk = new DiskSpace(free::get, 600);

    @Test
    void writesAreAdmittedUntilTheyWouldGoUnderTheReserve() {
        assertThat(disk.tryWrite(300)).isTrue();
        assertThat(disk.tryWrite(200)).as("1000 - 500 < 600").isFalse();
        assertThat(disk.tryWrite(100)).as("1000 - 400 = 600: at the reserve, not under").isTrue();
        assertThat(disk.tryWrite(1)).isFalse();
        assertThat(disk.usableBytes()).isEqualTo(600);
    }

    @Test
    void eachCheckReadsTheFreeSpaceAgainAndForgetsWhatItNowCounts() {
        disk.tryWrite(400);
        assertThat(disk.tryWrite(100)).isFalse();

        free.set(900); // the 400 reached the disk, and something else freed 300
        disk.check();
        assertThat(disk.usableBytes()).isEqualTo(900);
        assertThat(disk.tryWrite(300)).isTrue();

        free.set(500); // under the reserve: everything is refused, however small
        disk.check();
        assertThat(disk.tryWrite(1)).isFalse();

        free.set(5000); // space freed: writes are taken again at the next check
        assertThat(disk.tryWrite(1)).isFalse();
        disk.check();
        assertThat(disk.tryWrite(4000)).isTrue();
    }

    @Test
    void theLogSaysWhenRefusalsBeginAndWhenTheyEnd() {
        List<String> logged = new CopyOnWriteArrayList<>();
        AppenderBase<ILoggingEvent> capture = new AppenderBase<>() {
            @Override
            protected void append(ILoggingEvent event) {
                logged.add(event.getFormattedMessage());
            }
        };
        capture.start();
        Logger logger = (Logger) LoggerFactory.getLogger(DiskSpace.class);
        Level level = logger.getLevel();
        logger.setLevel(Level.INFO);
        logger.addAppender(capture);
        try {
            disk.check();
            assertThat(disk.tryWrite(500)).isFalse(); // the free space stays 1000, above the reserve
            disk.check();
            disk.check(); // no write was refused since the last reading
        } finally {
            logger.detachAppender(capture);
            logger.setLevel(level);
        }
        assertThat(logged).hasSize(2);
        assertThat(logged.get(0)).contains("1000 bytes free", "--min-free-disk 600", "refused");
        assertThat(logged.get(1)).contains("writes are accepted");
    }

    @Test
    void aReadingThatFailsKeepsTheLastOne() {
        DiskSpace failing = new DiskSpace(() -> {
            if (free.get() < 0) {
                throw new UncheckedIOException(new IOException("statfs failed"));
            }
            return free.get();
        }, 600);
        free.set(-1);
        failing.check();
        assertThat(failing.usableBytes()).isEqualTo(1000);
        assertThat(failing.tryWrite(400)).isTrue();
    }

    @Test
    void aFileSystemWithLessThanTheRoomToOpenIsNamedSoTheStoreIsNotOpened() {
        java.util.concurrent.atomic.AtomicLong bytes = new java.util.concurrent.atomic.AtomicLong(0);
        DiskSpace full = new DiskSpace(bytes::get, 256L << 20);
        assertThat(full.tooFullToOpen()).isEqualTo("its file system has 0 bytes free, too few for the store to open"
                + " safely (at least 67108864; writes need --min-free-disk 268435456): free space and start again");
        bytes.set(DiskSpace.ROOM_TO_OPEN - 1);
        assertThat(full.tooFullToOpen()).as("read afresh").contains((DiskSpace.ROOM_TO_OPEN - 1) + " bytes free");
        bytes.set(DiskSpace.ROOM_TO_OPEN);
        assertThat(full.tooFullToOpen()).as("under the reserve, but room to open: writes will be refused").isNull();
        assertThat(new DiskSpace(() -> 0, 0).tooFullToOpen()).as("the check off").isNull();
    }

    @Test
    void aReserveOfZeroAdmitsEverything() {
        DiskSpace off = new DiskSpace(() -> 0, 0);
        off.check();
        assertThat(off.tryWrite(Long.MAX_VALUE / 2)).isTrue();
        assertThat(DiskSpace.UNCHECKED.tryWrite(1L << 40)).isTrue();
    }

    @Test
    void theRealFileSystemIsRead(@TempDir Path dir) throws IOException {
        DiskSpace real = DiskSpace.of(dir, 1);
        real.check();
        assertThat(real.usableBytes()).isPositive();
        assertThat(real.tryWrite(1)).isTrue();
        assertThat(DiskSpace.of(dir, Long.MAX_VALUE).tryWrite(1)).as("no disk has that much free").isFalse();
    }
}
