#!/bin/bash
# Issue 16's saturation targets, 3 interleaved rounds: nginx, then 1 node and 3 nodes (RF 3, 2/3),
# PUT and GET, wrk -t2 -c64. Run from the repository root after `mvn -DskipTests install`.
# usage: perf/runs/20261126-cpu-per-request/saturation.sh OUT JAR [ROUNDS]
set -u
OUT=$1; JAR=$2; ROUNDS=${3:-3}
P="java -jar perf/target/kvorum-perf.jar"
RUN="$P run --jar $JAR --profile none --scrape-interval 0s --saturation --duration 15s --warmup 10s"
mkdir -p "$OUT"
summary() {
  python3 - "$1" "$2" "$3" <<'PY'
import json, sys
d, n, r = sys.argv[1:]
j = json.load(open(d + '/result.json'))
c = j.get('cpu') or {}
print("r%s %-8s %8.0f req/s  p99 %6.2f ms  server %6.2f us/req" % (
    r, n, j['achievedRate'], j['percentilesMs']['p99'], c.get('serverSeconds', 0) * 1e6 / j['requests']))
PY
}
for r in $(seq 1 "$ROUNDS"); do
  $P nginx --saturation --duration 15s --warmup 5s --out "$OUT/r$r-nginx" > "$OUT/r$r-nginx.log" 2>&1
  summary "$OUT/r$r-nginx" nginx $r
  for n in 1 3; do
    for wl in put get; do
      $RUN --nodes $n --workload $wl --out "$OUT/r$r-${n}n-$wl" > "$OUT/r$r-${n}n-$wl.log" 2>&1
      summary "$OUT/r$r-${n}n-$wl" "${n}n-$wl" $r
    done
  done
done | tee -a "$OUT/rounds.txt"
