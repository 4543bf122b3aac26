package io.kvorum.node.backup;

import java.io.IOException;
import java.nio.file.Path;

/** Lets tests of other packages write backups of small files, so that a few records span several. */
public final class BackupFileWriterAccess {

    private BackupFileWriterAccess() {
    }

    public static BackupFileWriter withFileBytes(Path memberDir, long fileBytes) throws IOException {
        return new BackupFileWriter(memberDir, fileBytes);
    }
}
