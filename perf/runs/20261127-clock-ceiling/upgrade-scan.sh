#!/bin/bash
# Usage: upgrade-scan.sh KEYS SECONDS (javac -cp NODE_JAR -d /tmp/forget Forget.java first; JAR below).
# Times a node's start (until /v0/status answers 200) on a store of $1 keys of 256 B, with the
# timestamp ceiling's key present and with it deleted (as a store of an older version): the scan.
JAR=/tmp/ab/hedge.jar; D=/tmp/scan/data
start() { local t0=$(date +%s%N); java -Xmx1g -XX:+UseZGC -jar $JAR --data-dir $D > node.log 2>&1 & echo $! > pid
  for i in $(seq 1 3000); do curl -s -o /dev/null -w '%{http_code}' localhost:8080/v0/status | grep -q 200 && break; sleep 0.05; done
  echo $(( ($(date +%s%N) - t0) / 1000000 )); }
stop() { kill $(cat pid); while kill -0 $(cat pid) 2>/dev/null; do sleep 0.1; done; }
rm -rf $D; start > /dev/null
(cd /work/main/perf/wrk && KEYS=$1 VALUE_BYTES=256 SEQUENTIAL=1 wrk -t2 -c64 -d${2:-40}s -s put.lua http://127.0.0.1:8080 | grep Requests/sec)
stop; du -sh $D/records
for r in 1 2; do
  echo "with key: $(start) ms"; stop
  java -cp $JAR:/tmp/forget Forget $D/records
  echo "scan: $(start) ms"; grep -i "scan\|timestamp" node.log | head -2; stop
done
