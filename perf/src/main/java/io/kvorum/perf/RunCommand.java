package io.kvorum.perf;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

/** Placeholder until the perf runner lands; it fails rather than pretend. */
@Command(name = "run", description = "(not built yet)")
final class RunCommand implements Callable<Integer> {
    @Override
    public Integer call() {
        System.err.println("kvorum perf run: not built yet");
        return 2;
    }
}
