#!/bin/bash
# The Netty floor under PUT (wrk's put.lua: a 256-byte body each) next to a 1-node Kvorum PUT,
# 3 interleaved rounds, at saturation (wrk) and at 25,000/s (wrk2). Node jar of 81adef7.
cd /work/main
export WRK2=/tmp/wrk2/wrk
P="java -jar /tmp/s14/perf-netty.jar"
N=/tmp/s13/node-head.jar
O=/tmp/s14/floor
K="--profile none --scrape-interval 0s --jar $N --nodes 1"
for r in 1 2 3; do
  $P netty --workload put --saturation --duration 15s --warmup 10s --out $O/netty-put-sat-r$r >/dev/null 2>&1
  $P run $K --workload put --saturation --duration 15s --warmup 10s --out $O/put2-sat-r$r >/dev/null 2>&1
  $P netty --workload put --rate 25000 --duration 30s --warmup 20s --out $O/netty-put-25k-r$r >/dev/null 2>&1
  $P run $K --workload put --rate 25000 --duration 30s --warmup 20s --out $O/put2-25k-r$r >/dev/null 2>&1
done
echo finished
