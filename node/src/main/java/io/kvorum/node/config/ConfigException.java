package io.kvorum.node.config;

/** A bad option or a bad environment. The message is one line meant for the operator. */
public final class ConfigException extends Exception {
    public ConfigException(String message) {
        super(message, null, false, false);
    }
}
