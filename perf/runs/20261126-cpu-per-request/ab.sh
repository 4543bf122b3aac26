#!/bin/bash
# The A/B rounds of rendezvous-ab.txt and leak-detection-ab.txt (run from /work/main with WRK2 set):
#   rendezvous: base = node jar of 7d9096d, cand = node jar of 05fbe7a; 1 node, 25000/s, PUT then GET
#   leak detection: the 7d9096d jar, "noleak" with --node-jvm-opt=-Dio.netty.leakDetection.level=disabled
# Also the rounds of ../20261127-answer-budget (nodeopts: extra node options, e.g. --http-threads=1).
# usage: ab.sh OUT ROUNDS MODE(rate|sat) NODES WORKLOAD "name|jar|jvmopts[|nodeopts]" ...
#   a jar of "nginx" or "netty" measures that baseline instead of a node jar
set -u
OUT=$1; ROUNDS=$2; MODE=$3; NODES=$4; WL=$5; shift 5
cd /work/main; export WRK2=/tmp/wrk2/wrk
P="java -jar perf/target/kvorum-perf.jar"
if [ "$MODE" = sat ]; then LOAD="--saturation --duration 15s --warmup 10s"; else LOAD="--rate $MODE --duration 20s --warmup 20s"; fi
mkdir -p $OUT
for r in $(seq 1 $ROUNDS); do
  for v in "$@"; do
    IFS='|' read -r n jar opts nopts <<< "$v"
    d=$OUT/r$r-$n
    extra=()
    for o in $opts; do extra+=("--node-jvm-opt=$o"); done
    for o in $nopts; do extra+=("--node-option=$o"); done
    if [ "$jar" = nginx ]; then
      if [ "$MODE" = sat ]; then L2="--saturation --duration 15s --warmup 5s"; else L2="--rate $MODE --duration 20s --warmup 5s"; fi
      $P nginx --workload $WL $L2 --out $d > $d.log 2>&1
    elif [ "$jar" = netty ]; then
      if [ "$MODE" = sat ]; then L2="--saturation --duration 15s --warmup 10s"; else L2="--rate $MODE --duration 20s --warmup 20s"; fi
      $P netty --workload $WL $L2 --out $d > $d.log 2>&1
    else
      $P run --jar $jar --profile none --scrape-interval 0s --nodes $NODES --workload $WL $LOAD "${extra[@]}" --out $d > $d.log 2>&1
    fi
    python3 - $d $n $r <<'PY'
import json,sys
d,n,r=sys.argv[1:]
try:
  j=json.load(open(d+'/result.json'))
except Exception as e:
  print("r%s %-10s FAILED %s"%(r,n,e)); sys.exit()
c=j.get('cpu') or {}
req=j['requests']
print("r%s %-10s rate %8.0f p50 %5.2f p99 %6.2f cpu/req %5.2f us cores %.2f machine/req %5.2f" % (r,n,j['achievedRate'],j['percentilesMs']['p50'],j['percentilesMs']['p99'],c.get('serverSeconds',0)*1e6/req, c.get('serverSeconds',0)/c.get('windowSeconds',1), c.get('machineSeconds',0)*1e6/req))
PY
  done
done | tee -a $OUT/out.txt
