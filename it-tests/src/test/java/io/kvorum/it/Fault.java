package io.kvorum.it;

/** The single-node faults that the scenarios inject, each with the way to heal it. */
enum Fault {
    /** SIGKILL; healed by starting the node again on the same volume. */
    KILL {
        @Override
        void inject(ClusterNode node) {
            node.kill();
        }

        @Override
        void heal(ClusterNode node) {
            node.start();
        }
    },
    /** The process is frozen; healed by thawing it. */
    PAUSE {
        @Override
        void inject(ClusterNode node) {
            node.pause();
        }

        @Override
        void heal(ClusterNode node) {
            node.unpause();
        }
    },
    /** The node is cut from its peers (not from the test); healed by reconnecting it. */
    PARTITION {
        @Override
        void inject(ClusterNode node) {
            node.disconnect();
        }

        @Override
        void heal(ClusterNode node) {
            node.reconnect();
        }
    };

    abstract void inject(ClusterNode node);

    abstract void heal(ClusterNode node);
}
