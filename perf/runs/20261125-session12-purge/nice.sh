#!/bin/bash
# Where the 3-node PUT tail at 10,000/s comes from: wrk2 at normal priority against wrk2 at nice -10.
cd /work/main
P="java -jar /tmp/s12/perf-head.jar"
R=/tmp/s12/nice
lat() { sed -n '/## Latency/,/latency.svg/p' $1/report.md | sed -n 5p; }
for r in 1 2 3; do
  for c in plain:/tmp/wrk2/wrk niced:/tmp/s12/wrk2-niced; do
    IFS=: read label bin <<< "$c"
    WRK2=$bin $P run --jar /tmp/s12/node-head.jar --nodes 3 --workload put --rate 10000 --duration 30s --warmup 20s --profile none \
      --node-option=--anti-entropy-interval=0 --out $R/3n-put-10k-$label-r$r > /dev/null 2>&1
    echo "r$r $label $(lat $R/3n-put-10k-$label-r$r)"
  done
done
echo ALLDONE
