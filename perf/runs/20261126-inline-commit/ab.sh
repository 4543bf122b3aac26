#!/bin/bash
# Commit on the offering thread when the storage writer is idle (BatchingWriter.offerOrCommit):
# one jar, -Dkvorum.commitInline=false (today) against true; 3 interleaved rounds.
cd /work/main; export WRK2=/tmp/wrk2/wrk
P="java -jar /tmp/s17/perf.jar"; J=/tmp/s17/node-inline.jar; O=perf/runs/20261126-inline-commit
val() { python3 -c "import json,sys;d=json.load(open('$1/result.json'));print(round(d['achievedRate']), d['percentilesMs']['p99'])"; }
for r in 1 2 3; do
  $P nginx --saturation --duration 15s --warmup 10s --out $O/nginx-sat-r$r >/dev/null 2>&1; echo "nginx-sat r$r $(val $O/nginx-sat-r$r)"
  $P nginx --rate 25000 --duration 30s --warmup 20s --out $O/nginx-25k-r$r >/dev/null 2>&1; echo "nginx-25k r$r $(val $O/nginx-25k-r$r)"
  for m in false true; do
    K="--profile none --scrape-interval 0s --jar $J --node-jvm-opt=-Dkvorum.commitInline=$m --workload put"
    $P run $K --nodes 1 --saturation --duration 15s --warmup 10s --out $O/$m-1n-sat-r$r >/dev/null 2>&1; echo "$m-1n-sat r$r $(val $O/$m-1n-sat-r$r)"
    $P run $K --nodes 1 --rate 25000 --duration 30s --warmup 20s --out $O/$m-1n-25k-r$r >/dev/null 2>&1; echo "$m-1n-25k r$r $(val $O/$m-1n-25k-r$r)"
    $P run $K --nodes 3 --saturation --duration 15s --warmup 10s --out $O/$m-3n-sat-r$r >/dev/null 2>&1; echo "$m-3n-sat r$r $(val $O/$m-3n-sat-r$r)"
  done
done
