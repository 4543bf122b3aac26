#!/bin/bash
# 1 node PUT at 25,000/s: as is, against the storage writer thread reniced to -10 (root) once the
# node runs. 3 interleaved rounds with nginx. Run from /work/main with WRK2 set.
set -u
OUT=$1; ROUNDS=${2:-3}; NICE=${3:--10}
cd /work/main; export WRK2=/tmp/wrk2/wrk
mkdir -p $OUT
summary() { python3 - "$1" "$2" "$3" <<'PY'
import json,sys
d,n,r=sys.argv[1:]
try: j=json.load(open(d+'/result.json'))
except Exception as e: print("r%s %-8s FAILED %s"%(r,n,e)); sys.exit()
c=j.get('cpu') or {}; req=j['requests']
print("r%s %-8s rate %8.0f p50 %5.2f p90 %5.2f p99 %6.2f cpu/req %5.2f us" % (r,n,j['achievedRate'],j['percentilesMs']['p50'],j['percentilesMs']['p90'],j['percentilesMs']['p99'],c.get('serverSeconds',0)*1e6/req))
PY
}
renice_writer() {
  for i in $(seq 1 600); do
    pid=$(pgrep -f "kvorum-node.jar --cluster" | head -1)
    if [ -n "$pid" ]; then
      for t in /proc/$pid/task/*; do
        if [ "$(cat $t/comm 2>/dev/null)" = "storage-writer-" ]; then
          # Only the Java writer: LevelDB's compaction thread may carry the same name; it has no Java frames.
          renice -n $NICE -p $(basename $t) > /dev/null && echo "reniced $(basename $t) of $pid" >&2
        fi
      done
      return
    fi
    sleep 0.1
  done
}
for r in $(seq 1 $ROUNDS); do
  java -jar perf/target/kvorum-perf.jar nginx --workload put --rate 25000 --duration 20s --warmup 5s --out $OUT/r$r-nginx > $OUT/r$r-nginx.log 2>&1
  summary $OUT/r$r-nginx nginx $r
  java -jar perf/target/kvorum-perf.jar run --jar node/target/kvorum-node.jar --profile none --scrape-interval 0s --nodes 1 --workload put --rate 25000 --duration 20s --warmup 20s --out $OUT/r$r-base > $OUT/r$r-base.log 2>&1
  summary $OUT/r$r-base base $r
  java -jar perf/target/kvorum-perf.jar run --jar node/target/kvorum-node.jar --profile none --scrape-interval 0s --nodes 1 --workload put --rate 25000 --duration 20s --warmup 20s --out $OUT/r$r-renice > $OUT/r$r-renice.log 2>&1 &
  sleep 3; renice_writer 2>> $OUT/renice.log
  wait
  summary $OUT/r$r-renice renice $r
done | tee -a $OUT/out.txt
