#!/bin/bash
# side by side: reads on the reader pool (head) vs on the caller's thread (prototype, -Dkvorum.inlineReads=true)
cd /work/main
export WRK2=/tmp/wrk2/wrk
P="java -jar /tmp/s13/perf-head.jar"
O=/tmp/s13/inline
for r in 1 2; do
  $P nginx --rate 25000 --duration 30s --warmup 10s --out $O/nginx-25k-r$r >/dev/null 2>&1
  $P run --jar /tmp/s13/node-head.jar --nodes 1 --workload get --saturation --duration 15s --warmup 10s --profile none --scrape-interval 0s --out $O/head-sat-r$r >/dev/null 2>&1
  $P run --jar /tmp/s13/node-inline.jar --node-jvm-opt=-Dkvorum.inlineReads=true --nodes 1 --workload get --saturation --duration 15s --warmup 10s --profile none --scrape-interval 0s --out $O/inline-sat-r$r >/dev/null 2>&1
  $P run --jar /tmp/s13/node-head.jar --nodes 1 --workload get --rate 25000 --duration 30s --warmup 10s --profile none --scrape-interval 0s --out $O/head-25k-r$r >/dev/null 2>&1
  $P run --jar /tmp/s13/node-inline.jar --node-jvm-opt=-Dkvorum.inlineReads=true --nodes 1 --workload get --rate 25000 --duration 30s --warmup 10s --profile none --scrape-interval 0s --out $O/inline-25k-r$r >/dev/null 2>&1
done
echo finished
