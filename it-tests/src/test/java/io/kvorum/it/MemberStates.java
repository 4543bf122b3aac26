package io.kvorum.it;

import io.kvorum.client.placement.ClusterView;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/** What a node's {@code GET /v0/cluster} says of a member, for the membership scenarios. */
final class MemberStates {

    /** The member is not in the membership. */
    static final String ABSENT = "absent";
    /** The node did not answer. */
    static final String UNKNOWN = "unknown";
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    private MemberStates() {
    }

    /** {@code member}'s state as the node at {@code base} knows it: normal, joining, leaving, absent or unknown. */
    static String stateOf(URI base, String member) {
        return stateOf(HTTP, base, null, member);
    }

    /**
     * The same through {@code http} (for an HTTPS node, a client that trusts its CA), with
     * {@code Authorization: Bearer token} unless {@code token} is null.
     */
    static String stateOf(HttpClient http, URI base, String token, String member) {
        try {
            HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(base + "/v0/cluster")).timeout(Duration.ofSeconds(5));
            if (token != null) {
                request.header("Authorization", "Bearer " + token);
            }
            HttpResponse<String> r = http.send(request.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
            if (r.statusCode() != 200) {
                return UNKNOWN;
            }
            return ClusterView.parse(r.body()).members().stream().filter(m -> m.id().equals(member))
                    .map(ClusterView.Member::state).findFirst().orElse(ABSENT);
        } catch (IOException e) {
            return UNKNOWN;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return UNKNOWN;
        }
    }
}
