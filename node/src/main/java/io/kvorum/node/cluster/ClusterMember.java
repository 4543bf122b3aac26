package io.kvorum.node.cluster;

/** One entry of {@code --cluster}: a node id and where it listens. */
public record ClusterMember(String id, String host, int httpPort, int grpcPort) {

    @Override
    public String toString() {
        String h = host.indexOf(':') >= 0 ? "[" + host + "]" : host;
        return id + "=" + h + ":" + httpPort + ":" + grpcPort;
    }
}
