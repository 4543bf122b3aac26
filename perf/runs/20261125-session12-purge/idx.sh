#!/bin/bash
# Anti-entropy's index pace again, now that the purge is paced: 250,000 (default) against 50,000 entries/s,
# rounds every 10 s so that each window holds several. 3 nodes, PUT at 10,000/s, 4 interleaved rounds.
cd /work/main
export WRK2=/tmp/wrk2/wrk
P="java -jar /tmp/s12/perf-head.jar"
R=/tmp/s12/idx
lat() { sed -n '/## Latency/,/latency.svg/p' $1/report.md | sed -n 5p; }
for r in 1 2 3 4; do
  for c in idx250k:node-paced idx50k:node-idx50k; do
    IFS=: read label jar <<< "$c"
    out=$R/3n-put-10k-ae10s-$label-r$r
    $P run --jar /tmp/s12/$jar.jar --nodes 3 --workload put --rate 10000 --duration 30s --warmup 20s --profile none \
      --node-option=--anti-entropy-interval=10000 --out $out > /dev/null 2>&1
    echo "r$r $label $(lat $out)"
  done
done
echo ALLDONE
