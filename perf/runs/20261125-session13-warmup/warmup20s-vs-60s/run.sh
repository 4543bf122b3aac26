#!/bin/bash
# 3 nodes, PUT at 10,000/s, every default: the standard 20 s warm-up (each node's first anti-entropy
# round and first purge pass fall in the window) against 60 s (they fall in the warm-up). 3 interleaved rounds.
cd /work/main
export WRK2=/tmp/wrk2/wrk
P="java -jar /tmp/s13/perf-head.jar"
O=/tmp/s13/warm
for r in 1 2 3; do
  for w in 20s 60s; do
    $P run --jar /tmp/s13/node-head.jar --nodes 3 --workload put --rate 10000 --duration 30s --warmup $w --profile none --out $O/3n-put-10k-warmup$w-r$r >/dev/null 2>&1
  done
done
echo finished
