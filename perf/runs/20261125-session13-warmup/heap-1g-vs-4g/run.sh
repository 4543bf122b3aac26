#!/bin/bash
# side by side at 25,000/s on one node: perf's 1 GiB heap vs 4 GiB (ZGC both), and nginx
cd /work/main
export WRK2=/tmp/wrk2/wrk
O=/tmp/s13/heap
P="java -jar /tmp/s13/perf-head.jar"
for r in 1 2; do
  $P nginx --rate 25000 --duration 30s --warmup 10s --out $O/nginx-25k-r$r >/dev/null 2>&1
  for w in get put; do
    for h in 1g 4g; do
      $P run --jar /tmp/s13/node-head.jar --heap $h --nodes 1 --workload $w --rate 25000 --duration 30s --warmup 20s --profile none --scrape-interval 0s --out $O/$w-$h-r$r >/dev/null 2>&1
    done
  done
done
echo finished
