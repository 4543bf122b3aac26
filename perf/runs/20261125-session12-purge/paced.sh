#!/bin/bash
# The paced purge against the unpaced one, and against no purge in the window (hourly): 3 nodes, PUT at 10,000/s, anti-entropy off.
cd /work/main
export WRK2=/tmp/wrk2/wrk
P="java -jar /tmp/s12/perf-head.jar"
R=/tmp/s12/paced
lat() { sed -n '/## Latency/,/latency.svg/p' $1/report.md | sed -n 5p; }
for r in 1 2 3; do
  for c in unpaced:node-head:60000 paced:node-paced:60000 hourly:node-head:3600000; do
    IFS=: read label jar pi <<< "$c"
    $P run --jar /tmp/s12/$jar.jar --nodes 3 --workload put --rate 10000 --duration 30s --warmup 20s --profile none \
      --node-option=--anti-entropy-interval=0 --node-option=--purge-interval=$pi --out $R/3n-put-10k-$label-r$r > /dev/null 2>&1
    echo "r$r $label $(lat $R/3n-put-10k-$label-r$r)"
  done
done
echo ALLDONE
