#!/bin/bash
# CPU per request at fixed rates, 3 interleaved rounds: nginx, the Netty floor and 1 node at
# 25,000/s (PUT, then GET), and 3 nodes at 10,000/s (PUT, GET). Run from the repository root with
# WRK2 set, after `mvn -DskipTests install`; JAR is the node jar measured.
# usage: perf/runs/20261126-cpu-per-request/rounds.sh OUT JAR [ROUNDS]
set -u
OUT=$1; JAR=$2; ROUNDS=${3:-3}
P="java -jar perf/target/kvorum-perf.jar"
RUN="$P run --jar $JAR --profile none --scrape-interval 0s"
mkdir -p "$OUT"
summary() { # folder name round: one line from result.json
  python3 - "$1" "$2" "$3" <<'PY'
import json, sys
d, n, r = sys.argv[1:]
j = json.load(open(d + '/result.json'))
c = j.get('cpu') or {}
req = j['requests']
print("r%s %-12s %8.0f req/s  p50 %5.2f  p99 %6.2f ms  server %6.2f us/req  machine %6.2f us/req" % (
    r, n, j['achievedRate'], j['percentilesMs']['p50'], j['percentilesMs']['p99'],
    c.get('serverSeconds', 0) * 1e6 / req, c.get('machineSeconds', 0) * 1e6 / req))
PY
}
for r in $(seq 1 "$ROUNDS"); do
  for wl in put get; do
    $P nginx --workload $wl --rate 25000 --duration 20s --warmup 5s --out "$OUT/r$r-nginx-$wl" > "$OUT/r$r-nginx-$wl.log" 2>&1
    summary "$OUT/r$r-nginx-$wl" "nginx-$wl" $r
    $P netty --workload $wl --rate 25000 --duration 20s --warmup 20s --out "$OUT/r$r-floor-$wl" > "$OUT/r$r-floor-$wl.log" 2>&1
    summary "$OUT/r$r-floor-$wl" "floor-$wl" $r
    $RUN --nodes 1 --workload $wl --rate 25000 --duration 20s --warmup 20s --out "$OUT/r$r-1n-$wl" > "$OUT/r$r-1n-$wl.log" 2>&1
    summary "$OUT/r$r-1n-$wl" "1n-$wl" $r
  done
  for wl in put get; do
    $RUN --nodes 3 --workload $wl --rate 10000 --duration 30s --warmup 30s --out "$OUT/r$r-3n-$wl" > "$OUT/r$r-3n-$wl.log" 2>&1
    summary "$OUT/r$r-3n-$wl" "3n-$wl" $r
  done
done | tee -a "$OUT/rounds.txt"
