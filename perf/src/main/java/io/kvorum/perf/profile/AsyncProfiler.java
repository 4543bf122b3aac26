package io.kvorum.perf.profile;

import com.sun.tools.attach.VirtualMachine;
import io.kvorum.perf.report.FrameDiff;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.zip.GZIPOutputStream;

/**
 * async-profiler (from the tools.profiler:async-profiler jar on this classpath) loaded into a
 * running node through the Attach API: {@link #start} records cpu, allocation and lock samples
 * into a JFR file, {@link #stop} writes it, {@link #convert} turns it into flame graphs and
 * collapsed stacks, per event, with jfr-converter, run as a subprocess.
 *
 * <p>For cpu samples async-profiler uses perf_events when the kernel allows them and falls back to
 * a timer (ctimer/itimer) otherwise, e.g. in containers; it says so in the node's log, which
 * {@link #engine} reads.
 */
public final class AsyncProfiler {

    /** The events of {@code --profile}. */
    public enum Event { CPU, ALLOC, LOCK }

    /**
     * The collapsed cpu stacks of a run, gzipped: plain they reach a megabyte, and run folders are
     * committed. Runs before this wrote a plain {@code cpu.collapsed}; {@link FrameDiff} reads both.
     */
    public static final String CPU_COLLAPSED = collapsed(Event.CPU);

    /**
     * The gzipped collapsed stacks of {@code event} in a run folder ({@code cpu.collapsed.gz},
     * {@code alloc.collapsed.gz}, {@code lock.collapsed.gz}): the JFR file is not kept, and with
     * these each flame graph can be drawn again (jfr-converter, collapsed to html).
     */
    public static String collapsed(Event event) {
        return event.name().toLowerCase() + ".collapsed.gz";
    }

    private static final String LIBRARY_RESOURCE = "/linux-x64/libasyncProfiler.so";

    private final Path library;
    private final Path jfr;
    private final long pid;
    private final Set<Event> events;

    private AsyncProfiler(Path library, Path jfr, long pid, Set<Event> events) {
        this.library = library;
        this.jfr = jfr;
        this.pid = pid;
        this.events = events;
    }

    /**
     * Starts profiling {@code pid} (which may be this JVM's own, loaded through async-profiler's
     * Java API), recording into {@code runDir/profile.jfr}.
     */
    public static AsyncProfiler start(long pid, Set<Event> events, Path runDir) throws IOException {
        if (events.isEmpty()) {
            throw new IllegalArgumentException("no events to profile");
        }
        Path library = runDir.resolve("libasyncProfiler.so").toAbsolutePath();
        try (InputStream in = AsyncProfiler.class.getResourceAsStream(LIBRARY_RESOURCE)) {
            if (in == null) {
                throw new IOException(LIBRARY_RESOURCE + " is not on the classpath (tools.profiler:async-profiler)");
            }
            Files.copy(in, library, StandardCopyOption.REPLACE_EXISTING);
        }
        AsyncProfiler profiler = new AsyncProfiler(library, runDir.resolve("profile.jfr").toAbsolutePath(), pid, events);
        profiler.command(startCommand(events, profiler.jfr));
        return profiler;
    }

    /**
     * "start,event=cpu,alloc,lock,jfr,file=..." for the chosen events (alloc and lock are options);
     * without cpu no event at all, which async-profiler takes as no cpu sampling (it refuses
     * {@code event=nop}, "Unsupported event type").
     */
    static String startCommand(Set<Event> events, Path jfr) {
        List<String> parts = new ArrayList<>(List.of("start"));
        if (events.contains(Event.CPU)) {
            parts.add("event=cpu");
        }
        if (events.contains(Event.ALLOC)) {
            parts.add("alloc");
        }
        if (events.contains(Event.LOCK)) {
            parts.add("lock");
        }
        parts.add("jfr");
        parts.add("file=" + jfr);
        return String.join(",", parts);
    }

    /** Stops profiling and writes the JFR file; returns it. */
    public Path stop() throws IOException {
        command("stop,file=" + jfr);
        return jfr;
    }

    private void command(String command) throws IOException {
        if (pid == ProcessHandle.current().pid()) { // this JVM (the driver's load): no self-attach needed
            try {
                one.profiler.AsyncProfiler.getInstance(library.toString()).execute(command);
            } catch (IllegalStateException | IllegalArgumentException e) {
                throw new IOException("async-profiler '" + command + "' in this JVM failed: " + e.getMessage(), e);
            }
            return;
        }
        try {
            VirtualMachine vm = VirtualMachine.attach(Long.toString(pid));
            try {
                vm.loadAgentPath(library.toString(), command);
            } finally {
                vm.detach();
            }
        } catch (com.sun.tools.attach.AttachNotSupportedException | com.sun.tools.attach.AgentLoadException
                 | com.sun.tools.attach.AgentInitializationException e) {
            throw new IOException("async-profiler '" + command + "' in pid " + pid + " failed: " + e, e);
        }
    }

    /**
     * The cpu sampling engine, told by the collapsed stacks: only perf_events sees kernel frames
     * (async-profiler marks them "_[k]"); the timer fallback (ctimer/itimer), used where
     * perf_event_open is refused, has none.
     */
    public static String engine(Path collapsedCpu) {
        String paranoid = readFirstLine(Path.of("/proc/sys/kernel/perf_event_paranoid"));
        try (var lines = FrameDiff.lines(collapsedCpu)) {
            boolean kernelFrames = lines.anyMatch(l -> l.contains("_[k]"));
            return (kernelFrames ? "perf_events (kernel frames sampled)"
                    : "timer fallback, ctimer/itimer (no kernel frames: perf_events restricted or refused)")
                    + ", kernel.perf_event_paranoid=" + paranoid;
        } catch (IOException | UncheckedIOException e) {
            return "unknown (no collapsed cpu stacks)";
        }
    }

    private static String readFirstLine(Path file) {
        try {
            return Files.readAllLines(file).stream().findFirst().orElse("?").trim();
        } catch (IOException e) {
            return "?";
        }
    }

    /**
     * Converts {@code jfr} into {@code cpu.html}, {@code alloc.html}, {@code lock.html} (for the
     * events recorded) and, for each of them, its gzipped collapsed stacks ({@link #collapsed}) in
     * {@code runDir}; returns the files written, the flame graphs first.
     */
    public static List<Path> convert(Path jfr, Set<Event> events, Path runDir) throws IOException, InterruptedException {
        return convert(jfr, events, runDir, "n1");
    }

    /** {@link #convert(Path, Set, Path)} with flame graphs titled for {@code who} ("n2", "the driver"). */
    public static List<Path> convert(Path jfr, Set<Event> events, Path runDir, String who) throws IOException, InterruptedException {
        List<Path> written = new ArrayList<>();
        for (Event event : events) {
            String name = event.name().toLowerCase();
            Path html = runDir.resolve(name + ".html");
            jfrconv(List.of("--" + name, "--title", "Kvorum " + who + " " + name, jfr.toString(), html.toString()), runDir);
            written.add(html);
        }
        for (Event event : events) {
            String name = event.name().toLowerCase();
            Path plain = runDir.resolve(name + ".collapsed");
            jfrconv(List.of("--" + name, "-o", "collapsed", jfr.toString(), plain.toString()), runDir);
            Path gzipped = runDir.resolve(collapsed(event));
            gzip(plain, gzipped);
            Files.delete(plain);
            written.add(gzipped);
        }
        return written;
    }

    /** Writes {@code source} gzipped to {@code target}. */
    public static void gzip(Path source, Path target) throws IOException {
        try (OutputStream out = new GZIPOutputStream(Files.newOutputStream(target))) {
            Files.copy(source, out);
        }
    }

    /** jfr-converter's Main (default package, on this classpath) in a child JVM: it may call System.exit. */
    private static void jfrconv(List<String> args, Path runDir) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), "Main"));
        command.addAll(args);
        Path log = runDir.resolve("jfrconv.log");
        Process p = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IOException("jfr-converter took over 120 s: " + String.join(" ", args));
        }
        if (p.exitValue() != 0) {
            throw new IOException("jfr-converter exited with " + p.exitValue() + " (" + String.join(" ", args) + "); see " + log);
        }
    }
}
