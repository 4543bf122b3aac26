#!/bin/bash
# 1 node at saturation, two node jars side by side, interleaved rounds: ab.sh BASE.jar CANDIDATE.jar put|get ROUNDS
# Here: BASE = node of 83f9c58, CANDIDATE = the same with mpsc.patch (BatchingWriter on an MPSC queue, park/unpark).
# A/B: 1 node at saturation, base vs candidate jar, interleaved rounds
cd /work/main; export WRK2=/tmp/wrk2/wrk
A=$1; B=$2; W=$3; R=${4:-3}; O=/tmp/s16/ab-$(basename $B .jar)-$W
K="--profile none --scrape-interval 0s --nodes 1"
for r in $(seq 1 $R); do
  for j in $A $B; do
    java -jar /tmp/s16/perf.jar run $K --jar $j --workload $W --saturation --duration 15s --warmup 10s --out $O/$(basename $j .jar)-r$r >/dev/null 2>&1
    printf "%s r%s %s\n" $(basename $j .jar) $r $(grep -o '"achievedRate" *: *[0-9.]*' $O/$(basename $j .jar)-r$r/result.json | grep -o '[0-9.]*$')
  done
done
