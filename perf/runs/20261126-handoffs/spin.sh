#!/bin/bash
# node-spin.jar = node of 83f9c58 with spin.patch (mpsc.patch plus a spin of writerSpinNanos before parking).
# writer spin before park: same jar, -Dkvorum.writerSpinNanos=0 vs 20000; 1 node PUT; 3 interleaved rounds
cd /work/main; export WRK2=/tmp/wrk2/wrk
P="java -jar /tmp/s16/perf.jar"; J=/tmp/s16/node-spin.jar; O=/tmp/s16/spin
K="--profile none --scrape-interval 0s --jar $J --nodes 1 --workload put"
val() { python3 -c "import json,sys;d=json.load(open('$1/result.json'));print(round(d['achievedRate']), d['percentilesMs']['p99'])"; }
for r in 1 2 3; do
  $P nginx --rate 25000 --duration 30s --warmup 20s --out $O/nginx-25k-r$r >/dev/null 2>&1; echo "nginx-25k r$r $(val $O/nginx-25k-r$r)"
  for s in 0 20000; do
    $P run $K --node-jvm-opt=-Dkvorum.writerSpinNanos=$s --saturation --duration 15s --warmup 10s --out $O/spin$s-sat-r$r >/dev/null 2>&1; echo "spin$s-sat r$r $(val $O/spin$s-sat-r$r)"
    $P run $K --node-jvm-opt=-Dkvorum.writerSpinNanos=$s --rate 25000 --duration 30s --warmup 20s --out $O/spin$s-25k-r$r >/dev/null 2>&1; echo "spin$s-25k r$r $(val $O/spin$s-25k-r$r)"
  done
done
