package io.kvorum.perf;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

/** Placeholder until the perf runner lands; it fails rather than pretend. */
@Command(name = "search", description = "(not built yet)")
final class SearchCommand implements Callable<Integer> {
    @Override
    public Integer call() {
        System.err.println("kvorum perf search: not built yet");
        return 2;
    }
}
