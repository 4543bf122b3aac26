#!/bin/bash
# Here: node-head = node of 60424b8, node-sorted = the same with KeyOrderedBatch.java.txt wired into LevelDbStore.apply.
# A/B 3 nodes PUT at saturation: head vs sorted batches, interleaved rounds
cd /work/main; export WRK2=/tmp/wrk2/wrk
O=/tmp/s16/ab3; K="--profile none --scrape-interval 0s --nodes 3 --workload put"
for r in 1 2 3; do
  for j in node-head node-sorted; do
    java -jar /tmp/s16/perf.jar run $K --jar /tmp/s16/$j.jar --saturation --duration 15s --warmup 10s --out $O/$j-r$r >/dev/null 2>&1
    echo "$j r$r $(python3 -c "import json;d=json.load(open('$O/$j-r$r/result.json'));print(round(d['achievedRate']), d['percentilesMs']['p99'])")"
  done
done
