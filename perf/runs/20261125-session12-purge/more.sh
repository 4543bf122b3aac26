#!/bin/bash
# Three more rounds of the 3-node rows with all defaults: paced purge against the previous jar.
cd /work/main
export WRK2=/tmp/wrk2/wrk
P="java -jar /tmp/s12/perf-head.jar"
R=/tmp/s12/targets
lat() { sed -n '/## Latency/,/latency.svg/p' $1/report.md | sed -n 5p; }
for r in 4 5 6; do
  for jar in paced head; do
    out=$R/3n-put-10k-$jar-r$r
    $P run --jar /tmp/s12/node-$jar.jar --nodes 3 --workload put --rate 10000 --duration 30s --warmup 20s --profile none --out $out > /dev/null 2>&1
    echo "r$r 3n-put-10k-$jar $(lat $out)"
  done
done
echo ALLDONE
