#!/bin/bash
# Jars: now.jar = main at 4bb82cf; head.jar = main at d12069b (the arrivals stage before the codec). Build a jar, copy it to the named path.
set -u
OUT=$1; ROUNDS=${2:-3}
cd /work/main; export WRK2=/tmp/wrk2/wrk
P="java -jar perf/target/kvorum-perf.jar"
for r in $(seq 1 $ROUNDS); do
  for j in now head; do
    $P run --jar /tmp/s18/$j.jar --profile none --scrape-interval 0s --nodes 1 --workload put --saturation --duration 15s --warmup 10s --out $OUT/r$r-$j-1n-sat > $OUT/r$r-$j.log 2>&1
  done
done
