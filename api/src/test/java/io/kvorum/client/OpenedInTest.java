package io.kvorum.client;

import java.util.ArrayList;
import java.util.List;

/** What a test opened (nodes, clients), closed in the reverse order after it. */
final class OpenedInTest implements AutoCloseable {

    private final List<AutoCloseable> opened = new ArrayList<>();

    <T extends AutoCloseable> T add(T resource) {
        opened.add(resource);
        return resource;
    }

    @Override
    public void close() throws Exception {
        for (int i = opened.size() - 1; i >= 0; i--) {
            opened.get(i).close();
        }
        opened.clear();
    }
}
