package io.kvorum.client.placement;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParseException;
import com.google.gson.JsonParser;
import com.google.gson.JsonPrimitive;
import java.net.URI;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * A cluster's membership as one node knows it: the body of {@code GET /v0/cluster} (docs/operations.md#growing-and-shrinking-a-cluster,
 * docs/http-api.md). The node serializes this record, field by field in declaration order, and
 * clients read it with {@link #parse}; so its components are the wire format.
 *
 * @param name              the cluster's name
 * @param epoch             grows with each membership change; a static cluster stays at its first, 1
 * @param members           every member, sorted by id
 * @param replicationFactor replicas of each key, the default {@code from} of a request
 */
public record ClusterView(String name, long epoch, List<Member> members, int replicationFactor) {

    /**
     * @throws IllegalArgumentException when a field is missing or out of range, or two members share an id
     */
    public ClusterView {
        require(name != null && !name.isEmpty(), "'name' is missing or empty");
        require(epoch >= 0, "'epoch' is negative: " + epoch);
        require(members != null && !members.isEmpty(), "'members' is missing or empty");
        require(replicationFactor >= 1, "'replicationFactor' is not a positive integer: " + replicationFactor);
        members = List.copyOf(members);
        Set<String> ids = new HashSet<>();
        for (Member m : members) {
            require(ids.add(m.id()), "member id '" + m.id() + "' appears twice");
        }
    }

    /**
     * One member.
     *
     * @param id    its node id
     * @param host  its host name or IP address (IPv6 without brackets)
     * @param http  its HTTP port, where clients send requests
     * @param grpc  its gRPC port, for its peers
     * @param state {@value #NORMAL}, {@value #JOINING} or {@value #LEAVING}; kept as a string so that
     *              a state a later version adds does not break older clients
     */
    public record Member(String id, String host, int http, int grpc, String state) {

        /** A member that replicates keys: placement is over these alone. */
        public static final String NORMAL = "normal";
        /** A member receiving the data of the keys it will replicate. */
        public static final String JOINING = "joining";
        /** A member handing its data over before it is removed. */
        public static final String LEAVING = "leaving";

        /** @throws IllegalArgumentException when a field is missing or out of range */
        public Member {
            require(id != null && !id.isEmpty(), "a member's 'id' is missing or empty");
            require(host != null && !host.isEmpty(), "member '" + id + "': 'host' is missing or empty");
            require(http >= 1 && http <= 65535, "member '" + id + "': 'http' is not a port: " + http);
            require(grpc >= 1 && grpc <= 65535, "member '" + id + "': 'grpc' is not a port: " + grpc);
            require(state != null && !state.isEmpty(), "member '" + id + "': 'state' is missing or empty");
        }

        public boolean isNormal() {
            return NORMAL.equals(state);
        }

        /** Where this member serves the HTTP API: {@code scheme://host:http}, an IPv6 host in brackets. */
        public URI httpUri(String scheme) {
            String h = host.indexOf(':') >= 0 ? "[" + host + "]" : host;
            return URI.create(scheme + "://" + h + ":" + http);
        }
    }

    /**
     * Reads the body of {@code GET /v0/cluster}. Fields it does not know are ignored.
     *
     * @throws IllegalArgumentException naming what is not valid JSON, or the field that is missing,
     *                                  of the wrong type or out of range
     */
    public static ClusterView parse(String json) {
        JsonObject root;
        try {
            JsonElement parsed = JsonParser.parseString(json);
            require(parsed.isJsonObject(), "not a JSON object");
            root = parsed.getAsJsonObject();
        } catch (JsonParseException e) {
            throw new IllegalArgumentException("cluster view: not valid JSON: " + e.getMessage(), e);
        }
        JsonElement membersField = field(root, "members", "");
        require(membersField.isJsonArray(), "'members' is not an array");
        JsonArray array = membersField.getAsJsonArray();
        List<Member> members = new ArrayList<>();
        for (int i = 0; i < array.size(); i++) {
            require(array.get(i).isJsonObject(), "members[" + i + "] is not an object");
            JsonObject m = array.get(i).getAsJsonObject();
            String where = "members[" + i + "].";
            members.add(new Member(string(m, "id", where), string(m, "host", where), integer(m, "http", where),
                    integer(m, "grpc", where), string(m, "state", where)));
        }
        return new ClusterView(string(root, "name", ""), number(root, "epoch", ""), members,
                integer(root, "replicationFactor", ""));
    }

    private static JsonElement field(JsonObject object, String name, String where) {
        JsonElement e = object.get(name);
        require(e != null && !e.isJsonNull(), "'" + where + name + "' is missing");
        return e;
    }

    private static String string(JsonObject object, String name, String where) {
        JsonElement e = field(object, name, where);
        require(e.isJsonPrimitive() && e.getAsJsonPrimitive().isString(), "'" + where + name + "' is not a string");
        return e.getAsString();
    }

    private static long number(JsonObject object, String name, String where) {
        JsonElement e = field(object, name, where);
        require(e.isJsonPrimitive() && e.getAsJsonPrimitive().isNumber(), "'" + where + name + "' is not a number");
        JsonPrimitive p = e.getAsJsonPrimitive();
        try {
            return p.getAsBigDecimal().longValueExact();
        } catch (ArithmeticException ex) {
            throw new IllegalArgumentException("cluster view: '" + where + name + "' is not an integer: " + p, ex);
        }
    }

    private static int integer(JsonObject object, String name, String where) {
        long n = number(object, name, where);
        require(n == (int) n, "'" + where + name + "' is out of range: " + n);
        return (int) n;
    }

    private static void require(boolean condition, String problem) {
        if (!condition) {
            throw new IllegalArgumentException("cluster view: " + problem);
        }
    }
}
