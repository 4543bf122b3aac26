#!/bin/bash
# A server profiled by async-profiler at 1 ms from its start, under wrk2 PUT at 25,000/s for 30 s
# (perf run samples every 10 ms, too coarse to split a 20 µs request). From the repository root,
# after `mvn -DskipTests install`, with WRK2 set and libasyncProfiler.so taken from the
# async-profiler jar in ~/.m2 (unzip -j ... linux-x64/libasyncProfiler.so -d /tmp/ap).
# usage: profile.sh floor|node OUT.collapsed [NODE_JAR]
set -eu
WHAT=$1; OUT=$2; JAR=${3:-node/target/kvorum-node.jar}
AGENT="-agentpath:/tmp/ap/libasyncProfiler.so=start,event=cpu,interval=1ms,file=$OUT,collapsed"
FLAGS="-Xms1g -Xmx1g -XX:+AlwaysPreTouch -XX:+UseZGC -XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints"
DATA=$(mktemp -d)
if [ "$WHAT" = floor ]; then
  java $FLAGS $AGENT -cp perf/target/kvorum-perf.jar io.kvorum.perf.baseline.NettyServerMain 18081 256 > "$OUT.log" 2>&1 &
else
  java $FLAGS $AGENT -jar "$JAR" --cluster n1=127.0.0.1:18081:18091 --node-id n1 --data-dir "$DATA" > "$OUT.log" 2>&1 &
fi
SERVER=$!
for i in $(seq 1 120); do
  curl -s -o /dev/null http://127.0.0.1:18081/v0/status && break
  sleep 0.5
done
(cd perf/wrk && KEYS=100000 VALUE_BYTES=256 SKEW=0.0 "$WRK2" -t2 -c64 -d30s -R25000 --latency -s put.lua http://127.0.0.1:18081)
kill $SERVER; wait $SERVER || true
rm -rf "$DATA"
