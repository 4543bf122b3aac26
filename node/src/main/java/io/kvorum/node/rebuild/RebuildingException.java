package io.kvorum.node.rebuild;

/**
 * A replica refused a read because it is rebuilding its copies after losing its data, or still
 * checking whether it must (docs/operations.md#replacing-a-disk). The coordinator counts it as a
 * failed replica, never as one that holds no version of the key.
 */
public final class RebuildingException extends RuntimeException {

    public RebuildingException(String message) {
        super(message, null, false, false);
    }
}
