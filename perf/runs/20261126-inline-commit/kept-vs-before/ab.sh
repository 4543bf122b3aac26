#!/bin/bash
# The kept code (7cb1496, inline commits by default, 0.5 ms pause) against the commit before it
# (9ff27a8, writer thread only): 1 node PUT at saturation and at 25,000/s; 3 interleaved rounds.
cd /work/main; export WRK2=/tmp/wrk2/wrk
P="java -jar /tmp/s17/perf.jar"; O=perf/runs/20261126-inline-commit/kept-vs-before
val() { python3 -c "import json,sys;d=json.load(open('$1/result.json'));p=d['percentilesMs'];print(round(d['achievedRate']), p['p50'], p['p99'])"; }
for r in 1 2 3; do
  for b in base final; do
    K="--profile none --scrape-interval 0s --jar /tmp/s17/node-$b.jar --nodes 1 --workload put"
    $P run $K --saturation --duration 15s --warmup 10s --out $O/$b-1n-sat-r$r >/dev/null 2>&1; echo "$b-1n-sat r$r $(val $O/$b-1n-sat-r$r)"
    $P run $K --rate 25000 --duration 30s --warmup 20s --out $O/$b-1n-25k-r$r >/dev/null 2>&1; echo "$b-1n-25k r$r $(val $O/$b-1n-25k-r$r)"
  done
done
