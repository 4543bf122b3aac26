#!/bin/bash
# The rounds of store-floor-rounds.txt (run from /work/main, node jar built, WRK2 not needed):
# each round, at saturation (wrk -t2 -c64, 15 s), nginx, the Netty floor, the store floor
# (StoreFloorMain: Netty's codec and the node's LevelDbStore written or read inline on the event
# loop, nothing else) and a 1-node Kvorum, one after the other.
#   javac -cp node/target/kvorum-node.jar -d /tmp/store-floor perf/runs/20261129-intel-budget/StoreFloorMain.java
#   bash perf/runs/20261129-intel-budget/store-floor.sh OUT ROUNDS put|get
# For get, the store floor is first filled by 10 s of PUT (the perf tool preloads the node's keys).
set -u
OUT=$1; ROUNDS=$2; WL=$3
JAR=node/target/kvorum-node.jar; CLASSES=/tmp/store-floor; PORT=27555; DB=$OUT/store-db
P="java -jar perf/target/kvorum-perf.jar"
LOAD="KEYS=100000 VALUE_BYTES=256 SKEW=0.0"
mkdir -p $OUT
rate() { python3 -c "import json;j=json.load(open('$1/result.json'));c=j.get('cpu') or {};print('r$2 $3 %8.0f cpu/req %5.2f'%(j['achievedRate'],c.get('serverSeconds',0)*1e6/j['requests']))"; }
for r in $(seq 1 $ROUNDS); do
  $P nginx --workload $WL --saturation --duration 15s --warmup 5s --out $OUT/r$r-nginx > $OUT/r$r-nginx.log 2>&1
  rate $OUT/r$r-nginx $r "nginx"
  $P netty --workload $WL --saturation --duration 15s --warmup 10s --out $OUT/r$r-netty > $OUT/r$r-netty.log 2>&1
  rate $OUT/r$r-netty $r "netty"
  rm -rf $DB
  java -Xms1g -Xmx1g -XX:+AlwaysPreTouch -XX:+UseZGC -cp $JAR:$CLASSES io.kvorum.node.storage.StoreFloorMain $PORT $DB > $OUT/r$r-store.log 2>&1 &
  pid=$!
  for i in $(seq 1 100); do grep -q listening $OUT/r$r-store.log && break; sleep 0.2; done
  env $LOAD wrk -t2 -c64 -d10s -s perf/wrk/put.lua http://127.0.0.1:$PORT > /dev/null 2>&1
  [ "$WL" = put ] || env $LOAD wrk -t2 -c64 -d5s -s perf/wrk/$WL.lua http://127.0.0.1:$PORT > /dev/null 2>&1
  t0=$(awk '{print $14+$15}' /proc/$pid/stat)   # utime + stime, clock ticks (100/s)
  env $LOAD wrk -t2 -c64 -d15s --latency -s perf/wrk/$WL.lua http://127.0.0.1:$PORT > $OUT/r$r-store.txt 2>&1
  t1=$(awk '{print $14+$15}' /proc/$pid/stat)
  kill $pid; wait $pid 2>/dev/null; rm -rf $DB
  python3 - $OUT/r$r-store.txt $t0 $t1 $r <<'PY'
import sys,re
t=open(sys.argv[1]).read(); t0,t1=int(sys.argv[2]),int(sys.argv[3])
rate=float(re.search(r'Requests/sec:\s+([\d.]+)',t).group(1)); req=int(re.search(r'(\d+) requests in',t).group(1))
non=re.search(r'Non-2xx.*?(\d+)',t)
print('r%s store %8.0f cpu/req %5.2f %s'%(sys.argv[4],rate,(t1-t0)/100*1e6/req,'non2xx '+non.group(1) if non else ''))
PY
  $P run --jar $JAR --profile none --scrape-interval 0s --nodes 1 --workload $WL --saturation --duration 15s --warmup 10s --out $OUT/r$r-node > $OUT/r$r-node.log 2>&1
  rate $OUT/r$r-node $r "node "
done | tee -a $OUT/rounds.txt
