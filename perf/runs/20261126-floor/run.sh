#!/bin/bash
# nginx, the Netty floor (perf netty) and a 1-node Kvorum side by side, 3 interleaved rounds:
# at saturation (wrk) and at 25,000/s (wrk2). Node jar built at 81adef7 (node code as of b962880).
cd /work/main
export WRK2=/tmp/wrk2/wrk
P="java -jar /tmp/s14/perf-netty.jar"
N=/tmp/s13/node-head.jar
O=/tmp/s14/floor
K="--profile none --scrape-interval 0s --jar $N --nodes 1"
for r in 1 2 3; do
  $P nginx --saturation --duration 15s --warmup 10s --out $O/nginx-sat-r$r >/dev/null 2>&1
  $P netty --saturation --duration 15s --warmup 10s --out $O/netty-sat-r$r >/dev/null 2>&1
  $P run $K --workload get --saturation --duration 15s --warmup 10s --out $O/get-sat-r$r >/dev/null 2>&1
  $P run $K --workload put --saturation --duration 15s --warmup 10s --out $O/put-sat-r$r >/dev/null 2>&1
  $P nginx --rate 25000 --duration 30s --warmup 20s --out $O/nginx-25k-r$r >/dev/null 2>&1
  $P netty --rate 25000 --duration 30s --warmup 20s --out $O/netty-25k-r$r >/dev/null 2>&1
  $P run $K --workload get --rate 25000 --duration 30s --warmup 20s --out $O/get-25k-r$r >/dev/null 2>&1
  $P run $K --workload put --rate 25000 --duration 30s --warmup 20s --out $O/put-25k-r$r >/dev/null 2>&1
done
echo finished
