#!/bin/bash
# Is the 3-node PUT tail at 10,000/s the purge pass? Anti-entropy off in all; purge every 60 s (default) against hourly.
cd /work/main
export WRK2=/tmp/wrk2/wrk
P="java -jar /tmp/s12/perf-head.jar"
R=/tmp/s12/purge
lat() { sed -n '/## Latency/,/latency.svg/p' $1/report.md | sed -n 5p; }
for r in 1 2 3; do
  for c in purge60s:60000 purge1h:3600000; do
    IFS=: read label pi <<< "$c"
    $P run --jar /tmp/s12/node-head.jar --nodes 3 --workload put --rate 10000 --duration 30s --warmup 20s --profile none \
      --node-option=--anti-entropy-interval=0 --node-option=--purge-interval=$pi --out $R/3n-put-10k-$label-r$r > /dev/null 2>&1
    echo "r$r $label $(lat $R/3n-put-10k-$label-r$r)"
  done
done
echo ALLDONE
