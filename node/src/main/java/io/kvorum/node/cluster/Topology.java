package io.kvorum.node.cluster;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The static cluster: every member, this node included, in a canonical order (by id) that does
 * not depend on the order of {@code --cluster}.
 */
public final class Topology {

    private static final Pattern NODE_ID = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.-]{0,63}");

    /** Whether {@code id} is a well-formed member id (what {@code --cluster} accepts). */
    public static boolean isNodeId(String id) {
        return id != null && NODE_ID.matcher(id).matches();
    }
    /**
     * A DNS name or an IPv4 address: dot-separated labels of letters, digits, inner '-' and '_'
     * (container networks use '_' in names that resolve).
     */
    private static final Pattern HOST_NAME = Pattern.compile(
            "[A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?(\\.[A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?)*\\.?");

    private final List<ClusterMember> members;

    public Topology(List<ClusterMember> members) {
        List<ClusterMember> sorted = new ArrayList<>(members);
        sorted.sort(Comparator.comparing(ClusterMember::id));
        this.members = List.copyOf(sorted);
    }

    /**
     * Parses {@code ID=HOST:HTTP:GRPC[,...]}. HOST may be an IPv6 address in brackets.
     *
     * @throws InvalidTopologyException naming the first malformed entry, or a duplicate id or endpoint
     */
    public static Topology parse(String spec) throws InvalidTopologyException {
        if (spec == null || spec.isBlank()) {
            throw new InvalidTopologyException("--cluster is empty; expected ID=HOST:HTTP:GRPC[,...]");
        }
        List<ClusterMember> members = new ArrayList<>();
        Set<String> ids = new HashSet<>();
        Set<String> endpoints = new HashSet<>();
        for (String entry : spec.split(",", -1)) {
            ClusterMember m = parseEntry(entry.trim());
            if (!ids.add(m.id())) {
                throw new InvalidTopologyException("--cluster names node id '" + m.id() + "' twice");
            }
            for (String endpoint : List.of(m.host() + ":" + m.httpPort(), m.host() + ":" + m.grpcPort())) {
                if (!endpoints.add(endpoint)) {
                    throw new InvalidTopologyException("--cluster uses address " + endpoint + " twice");
                }
            }
            members.add(m);
        }
        return new Topology(members);
    }

    private static ClusterMember parseEntry(String entry) throws InvalidTopologyException {
        String problem = "malformed --cluster entry '" + entry + "'; expected ID=HOST:HTTP:GRPC";
        int eq = entry.indexOf('=');
        if (eq <= 0) {
            throw new InvalidTopologyException(problem);
        }
        String id = entry.substring(0, eq);
        if (!NODE_ID.matcher(id).matches()) {
            throw new InvalidTopologyException(problem + " (node id: letters, digits, '_', '.', '-', at most 64)");
        }
        String address = entry.substring(eq + 1);
        int grpcColon = address.lastIndexOf(':');
        int httpColon = grpcColon > 0 ? address.lastIndexOf(':', grpcColon - 1) : -1;
        if (httpColon <= 0) {
            throw new InvalidTopologyException(problem);
        }
        String host = address.substring(0, httpColon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        if (host.isEmpty() || host.contains("[") || host.contains("]")) {
            throw new InvalidTopologyException(problem);
        }
        if (!isHost(host)) {
            throw new InvalidTopologyException(problem + " (host '" + host + "' is not a host name or IP address)");
        }
        int http = parsePort(address.substring(httpColon + 1, grpcColon), problem);
        int grpc = parsePort(address.substring(grpcColon + 1), problem);
        if (http == grpc) {
            throw new InvalidTopologyException(problem + " (HTTP and gRPC ports must differ)");
        }
        return new ClusterMember(id, host, http, grpc);
    }

    /**
     * Whether {@code host} is syntactically a host name, an IPv4 address or an IPv6 address (without
     * brackets). Nothing is looked up.
     */
    public static boolean isHost(String host) {
        if (host.indexOf(':') >= 0) {
            try {
                return new URI("http://[" + host + "]/").getHost() != null; // URI checks IPv6 syntax
            } catch (URISyntaxException e) {
                return false;
            }
        }
        return host.length() <= 253 && HOST_NAME.matcher(host).matches();
    }

    private static int parsePort(String s, String problem) throws InvalidTopologyException {
        try {
            int port = Integer.parseInt(s);
            if (port >= 1 && port <= 65535) {
                return port;
            }
        } catch (NumberFormatException ignored) {
            // falls through to the error below
        }
        throw new InvalidTopologyException(problem + " (port '" + s + "' is not 1..65535)");
    }

    /** Every member, sorted by id. */
    public List<ClusterMember> members() {
        return members;
    }

    public int size() {
        return members.size();
    }

    /** The member with this id, or null. */
    public ClusterMember member(String id) {
        for (ClusterMember m : members) {
            if (m.id().equals(id)) {
                return m;
            }
        }
        return null;
    }

    /** Two topologies are equal when they have the same members, whatever the order they were given in. */
    @Override
    public boolean equals(Object o) {
        return o instanceof Topology other && members.equals(other.members);
    }

    @Override
    public int hashCode() {
        return members.hashCode();
    }

    @Override
    public String toString() {
        return members.toString();
    }
}
