package io.kvorum.perf.ycsb;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

/** Placeholder until the YCSB binding lands; it fails rather than pretend. */
@Command(name = "ycsb", description = "(not built yet)")
public final class YcsbCommand implements Callable<Integer> {
    @Override
    public Integer call() {
        System.err.println("kvorum perf ycsb: not built yet");
        return 2;
    }
}
