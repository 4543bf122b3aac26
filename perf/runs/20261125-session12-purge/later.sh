#!/bin/bash
# Is it the first anti-entropy round after start? Every default, paced jar, a 60 s warm-up so that the
# first round (48-72 s after start) falls in the warm-up and the window holds the second or none.
cd /work/main
export WRK2=/tmp/wrk2/wrk
P="java -jar /tmp/s12/perf-head.jar"
R=/tmp/s12/later
lat() { sed -n '/## Latency/,/latency.svg/p' $1/report.md | sed -n 5p; }
for r in 1 2 3; do
  out=$R/3n-put-10k-warmup60s-r$r
  $P run --jar /tmp/s12/node-paced.jar --nodes 3 --workload put --rate 10000 --duration 30s --warmup 60s --profile none --out $out > /dev/null 2>&1
  echo "r$r warmup60s $(lat $out)"
done
echo ALLDONE
