package io.kvorum.node.security;

import java.util.Locale;

/**
 * What a bearer token may do (docs/operations.md#security): each role allows what the one before it
 * allows, and more. {@code read} reads entities, ranges, the membership and the metrics;
 * {@code write} also writes and deletes entities; {@code admin} also changes the membership and
 * runs repair and cleanup. Which request needs which role is {@code http.EndpointRoles}'s table.
 */
public enum Role {
    READ, WRITE, ADMIN;

    /** Whether a token of this role may make a request that needs {@code needed}. */
    public boolean allows(Role needed) {
        return compareTo(needed) >= 0;
    }

    /** The role as the token file spells it: {@code read}, {@code write} or {@code admin}. */
    @Override
    public String toString() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The role the token file spells {@code word}, or null when it names none (the case counts). */
    static Role named(String word) {
        for (Role role : values()) {
            if (role.toString().equals(word)) {
                return role;
            }
        }
        return null;
    }
}
