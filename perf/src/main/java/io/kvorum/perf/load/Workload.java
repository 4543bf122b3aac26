package io.kvorum.perf.load;

/** The request mix of a run; each is one script in perf/wrk. */
public enum Workload {
    PUT("put.lua"), GET("get.lua"), MIXED("mixed.lua"), DELETE("delete.lua");

    private final String script;

    Workload(String script) {
        this.script = script;
    }

    public String script() {
        return script;
    }
}
