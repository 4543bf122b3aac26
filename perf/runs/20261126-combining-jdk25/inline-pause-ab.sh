#!/bin/bash
# Jars: now.jar = main at 4bb82cf (one inline commit over 0.5 ms pauses them for 1 s); slow3.jar = a throwaway where three within 100 ms do. Build a jar, copy it to the named path.
set -u
OUT=$1; ROUNDS=${2:-3}
cd /work/main; export WRK2=/tmp/wrk2/wrk
P="java -jar perf/target/kvorum-perf.jar"
for r in $(seq 1 $ROUNDS); do
  $P nginx --rate 25000 --duration 30s --warmup 10s --out $OUT/r$r-nginx-25k > $OUT/r$r-nginx.log 2>&1
  for j in now slow3; do
    $P run --jar /tmp/s18/$j.jar --node-jvm-opt=-Dlogback.configurationFile=perf/runs/20261126-combining-jdk25/logback-debug-writer.xml --profile none --scrape-interval 0s --nodes 1 --workload put --rate 25000 --duration 30s --warmup 20s --out $OUT/r$r-$j-1n-25k > $OUT/r$r-$j.log 2>&1
  done
done
