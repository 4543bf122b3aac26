#!/bin/bash
# What later anti-entropy rounds cost at saturation, profiled: 3 nodes, RF 3, PUT at saturation
# (wrk -c64), 60 s measured after 70 s of warm-up (each node's second round falls in the window),
# anti-entropy as shipped against off, interleaved, every node profiled (cpu). Run from /work/main.
# Node jar of 7731cef; 3 rounds on 2026-11-27 19:12-19:27 UTC, nothing else running.
# usage: run.sh OUT JAR ROUNDS
set -u
OUT=$1; JAR=$2; ROUNDS=$3
export WRK2=${WRK2:-/tmp/wrk2/wrk}; mkdir -p $OUT
for r in $(seq 1 $ROUNDS); do
  for v in "on|" "off|--anti-entropy-interval=0"; do
    IFS='|' read -r n opts <<< "$v"
    d=$OUT/r$r-$n; extra=()
    for o in $opts; do extra+=("--node-option=$o"); done
    java -jar perf/target/kvorum-perf.jar run --jar $JAR --profile cpu --profile-all-nodes --scrape-interval 0s \
      --nodes 3 --workload put --saturation --duration 60s --warmup 70s "${extra[@]}" --out $d > $d.log 2>&1
    python3 -c "
import json; j=json.load(open('$d/result.json')); c=j['cpu']
print('r$r %-4s %6d/s p99 %5.2f ms cpu/req %5.1f us' % ('$n', j['achievedRate'], j['percentilesMs']['p99'], c['serverSeconds']*1e6/j['requests']))"
  done
done
