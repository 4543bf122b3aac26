#!/bin/bash
# Jars: base.jar = main at abb5979; combine*.jar = a throwaway flat-combining BatchingWriter (not kept); budget.jar = main at 223dcf5 (the body budget). Build a jar, copy it to the named path.
# A/B: base vs combine, interleaved rounds. Usage: ab.sh OUT ROUNDS
set -u
OUT=$1; ROUNDS=${2:-3}
cd /work/main
export WRK2=/tmp/wrk2/wrk
P="java -jar perf/target/kvorum-perf.jar"
for r in $(seq 1 $ROUNDS); do
  $P nginx --saturation --duration 15s --warmup 5s --out $OUT/r$r-nginx-sat > $OUT/r$r-nginx-sat.log 2>&1
  for j in base combine; do
    $P run --jar /tmp/s18/$j.jar --profile none --scrape-interval 0s --nodes 1 --workload put --saturation --duration 15s --warmup 10s --out $OUT/r$r-$j-1n-sat > $OUT/r$r-$j-1n-sat.log 2>&1
  done
  for j in combine base; do
    $P run --jar /tmp/s18/$j.jar --profile none --scrape-interval 0s --nodes 3 --workload put --saturation --duration 15s --warmup 10s --out $OUT/r$r-$j-3n-sat > $OUT/r$r-$j-3n-sat.log 2>&1
  done
done
for f in $OUT/r*/result.json; do printf "%s %s\n" "$f" "$(python3 -c "import json;d=json.load(open('$f'));print(round(d['achievedRate']), d['percentilesMs'].get('p99'))")"; done
