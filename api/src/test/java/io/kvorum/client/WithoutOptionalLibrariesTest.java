package io.kvorum.client;

import static io.kvorum.client.FakeNode.answer;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Micrometer and OpenTelemetry are optional dependencies of the driver (docs/java-client.md#metrics-and-traces):
 * a client given neither runs with neither on the class path. The driver's classes are loaded here
 * again by a class loader that hides both libraries.
 */
@Timeout(60)
class WithoutOptionalLibrariesTest {

    @Test
    void aClientRunsWithNeitherMicrometerNorOpenTelemetryOnTheClassPath() throws Exception {
        Hiding loader = new Hiding(getClass().getClassLoader());
        assertThatThrownBy(() -> Class.forName("io.micrometer.core.instrument.MeterRegistry", false, loader))
                .as("the loader hides Micrometer").isInstanceOf(ClassNotFoundException.class);
        assertThatThrownBy(() -> Class.forName("io.opentelemetry.api.OpenTelemetry", false, loader))
                .as("and OpenTelemetry").isInstanceOf(ClassNotFoundException.class);
        try (FakeNode node = FakeNode.start((r, n) -> switch (r.method().name()) {
            case "PUT" -> answer(201, "");
            case "DELETE" -> answer(202, "");
            default -> r.uri().contains("id=gone") ? answer(404, "") : answer(200, "Ada");
        })) {
            @SuppressWarnings("unchecked")
            Function<URI, String> calls = (Function<URI, String>) loader.loadClass(Calls.class.getName())
                    .getDeclaredConstructor().newInstance();
            assertThat(calls.getClass().getClassLoader()).as("the driver's classes come from the hiding loader")
                    .isSameAs(loader);

            assertThat(calls.apply(node.uri())).isEqualTo("Ada, absent");
        }
    }

    /** What an application without either library does; loaded by {@link Hiding}, so its client is too. */
    public static final class Calls implements Function<URI, String> {
        @Override
        public String apply(URI uri) {
            try (KvorumClient kv = KvorumClient.builder().endpoints(uri).build()) {
                kv.put("user:1", "Ada".getBytes(StandardCharsets.UTF_8)).join();
                String v = new String(kv.get("user:1").join().orElseThrow(), StandardCharsets.UTF_8);
                Optional<byte[]> gone = kv.get("gone").join();
                kv.delete("user:1").join();
                return v + ", " + (gone.isPresent() ? "present" : "absent");
            }
        }
    }

    /**
     * Loads the driver's classes (and this test's) itself, from the same class files, and refuses
     * Micrometer's and OpenTelemetry's; everything else comes from the parent.
     */
    private static final class Hiding extends ClassLoader {

        Hiding(ClassLoader parent) {
            super(parent);
        }

        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            if (name.startsWith("io.micrometer.") || name.startsWith("io.opentelemetry.")) {
                throw new ClassNotFoundException(name + " is hidden");
            }
            if (!name.startsWith("io.kvorum.client.")) {
                return super.loadClass(name, resolve);
            }
            synchronized (getClassLoadingLock(name)) {
                Class<?> c = findLoadedClass(name);
                if (c == null) {
                    c = define(name);
                }
                if (resolve) {
                    resolveClass(c);
                }
                return c;
            }
        }

        private Class<?> define(String name) throws ClassNotFoundException {
            try (InputStream in = getParent().getResourceAsStream(name.replace('.', '/') + ".class")) {
                if (in == null) {
                    throw new ClassNotFoundException(name);
                }
                byte[] bytes = in.readAllBytes();
                return defineClass(name, bytes, 0, bytes.length);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }
}
