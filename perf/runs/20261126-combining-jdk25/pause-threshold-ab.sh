#!/bin/bash
# Jars: base.jar = main at abb5979; combine*.jar = a throwaway flat-combining BatchingWriter (not kept); budget.jar = main at 223dcf5 (the body budget). Build a jar, copy it to the named path.
set -u
OUT=$1; ROUNDS=${2:-2}
cd /work/main; export WRK2=/tmp/wrk2/wrk
P="java -jar perf/target/kvorum-perf.jar"
for r in $(seq 1 $ROUNDS); do
  for t in 500 5000 100000; do
    $P run --jar /tmp/s18/combine2.jar --node-jvm-opt=-Dkvorum.slowInlineMicros=$t --profile none --scrape-interval 0s --nodes 1 --workload put --saturation --duration 15s --warmup 10s --out $OUT/r$r-t$t-1n-sat > $OUT/r$r-t$t.log 2>&1
  done
  $P run --jar /tmp/s18/base.jar --profile none --scrape-interval 0s --nodes 1 --workload put --saturation --duration 15s --warmup 10s --out $OUT/r$r-base-1n-sat > $OUT/r$r-base.log 2>&1
done
