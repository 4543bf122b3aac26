#!/bin/bash
# 3 nodes (RF 3, quorum 2/3) at saturation next to nginx, 3 interleaved rounds, on the same
# machine and in the same session as run.sh. Node jar built at 81adef7.
cd /work/main
P="java -jar /tmp/s14/perf-netty.jar"
N=/tmp/s13/node-head.jar
O=/tmp/s14/floor
K="--profile none --scrape-interval 0s --jar $N --nodes 3"
for r in 1 2 3; do
  $P nginx --saturation --duration 15s --warmup 10s --out $O/nginx3-sat-r$r >/dev/null 2>&1
  $P run $K --workload put --saturation --duration 15s --warmup 10s --out $O/3n-put-sat-r$r >/dev/null 2>&1
  $P run $K --workload get --saturation --duration 15s --warmup 10s --out $O/3n-get-sat-r$r >/dev/null 2>&1
done
echo finished
