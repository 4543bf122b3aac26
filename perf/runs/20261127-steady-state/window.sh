#!/bin/bash
# 3 nodes, PUT at saturation (wrk -c64, 15 s), node jar JAR, after a warm-up of WARMUP, with extra
# node options per variant; prints achieved rate, p99 (ms), server CPU per request (µs), and each
# node's C2 compiler time during the measured run. Run from /work/main, nothing else running.
# usage: window.sh OUT JAR WARMUP ROUNDS "name|node options" ...
#   e.g. window.sh /tmp/ae JAR 40s 2 "on|" "off|--anti-entropy-interval=0"
set -u
OUT=$1; JAR=$2; WARMUP=$3; ROUNDS=$4; shift 4
cd "$(dirname "$0")/../../.."
export WRK2=${WRK2:-/tmp/wrk2/wrk}; mkdir -p $OUT
for r in $(seq 1 $ROUNDS); do
  for v in "$@"; do
    IFS='|' read -r n opts <<< "$v"
    d=$OUT/r$r-$n; extra=()
    for o in $opts; do extra+=("--node-option=$o"); done
    java -jar perf/target/kvorum-perf.jar run --jar $JAR --profile none --scrape-interval 0s --nodes 3 \
      --workload put --saturation --duration 15s --warmup $WARMUP "${extra[@]}" --out $d > $d.log 2>&1
    python3 -c "
import json; j=json.load(open('$d/result.json')); c=j['cpu']
print('r$r %-5s %6d/s p99 %5.2f ms cpu/req %5.1f us' % ('$n', j['achievedRate'], j['percentilesMs']['p99'], c['serverSeconds']*1e6/j['requests']))"
    grep -h 'C2 Compiler' $d/report.md | awk -F'|' '{printf "   C2 compiler on a core: %s\n", $4}'
  done
done
