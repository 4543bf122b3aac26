#!/bin/bash
# 1 node PUT at 25,000/s: node data on the disk (/tmp, ext4 on virtio) against tmpfs (/dev/shm),
# node jar of fac77b8, 3 interleaved rounds with nginx. Run from /work/main with WRK2 set.
set -u
OUT=$1; ROUNDS=${2:-3}; WL=${3:-put}
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
for r in $(seq 1 $ROUNDS); do
  java -jar perf/target/kvorum-perf.jar nginx --workload $WL --rate 25000 --duration 20s --warmup 5s --out $OUT/r$r-nginx > $OUT/r$r-nginx.log 2>&1
  summary $OUT/r$r-nginx nginx $r
  java -jar perf/target/kvorum-perf.jar run --jar node/target/kvorum-node.jar --profile none --scrape-interval 0s --nodes 1 --workload $WL --rate 25000 --duration 20s --warmup 20s --out $OUT/r$r-disk > $OUT/r$r-disk.log 2>&1
  summary $OUT/r$r-disk disk $r
  java -Djava.io.tmpdir=/dev/shm/kvperf -jar perf/target/kvorum-perf.jar run --jar node/target/kvorum-node.jar --profile none --scrape-interval 0s --nodes 1 --workload $WL --rate 25000 --duration 20s --warmup 20s --out $OUT/r$r-tmpfs > $OUT/r$r-tmpfs.log 2>&1
  summary $OUT/r$r-tmpfs tmpfs $r
done | tee -a $OUT/out.txt
