#!/bin/bash
# The CPU time of a node's threads, grouped by name, over DURATION s of wrk PUT at saturation
# (after 10 s of warm-up): which threads a request's time goes to. From the repository root;
# Debian's wrk.
# usage: threads.sh JAR "JVM_OPTS" DURATION
JAR=$1; OPTS=$2; DUR=${3:-20}
pkill -f 'cluster n1=127.0.0.1:18080' ; sleep 1
rm -rf ${WORK:-/tmp/kvorum-threads}/data; mkdir -p ${WORK:-/tmp/kvorum-threads}/data
java -Xms1g -Xmx1g $OPTS -jar $JAR --cluster n1=127.0.0.1:18080:19080 --node-id n1 --data-dir ${WORK:-/tmp/kvorum-threads}/data > ${WORK:-/tmp/kvorum-threads}/node.log 2>&1 &
PID=$!
for i in $(seq 1 100); do curl -s -o /dev/null localhost:18080/v0/status && break; sleep 0.2; done
cd /work/main/perf/wrk
wrk -t2 -c64 -d10s -s put.lua http://127.0.0.1:18080 > /dev/null
snap() { for t in /proc/$PID/task/*; do n=$(cat $t/comm); s=($(sed 's/.*) //' $t/stat)); echo "$n ${s[11]} ${s[12]}"; done; }
snap > ${WORK:-/tmp/kvorum-threads}/before
wrk -t2 -c64 -d${DUR}s -s put.lua http://127.0.0.1:18080 | grep -E 'Requests/sec'
snap > ${WORK:-/tmp/kvorum-threads}/after
kill $PID; wait $PID 2>/dev/null
python3 - <<'PY'
import re,collections
def load(f):
  d=collections.Counter()
  for l in open(f):
    n,u,s=l.rsplit(' ',2)
    g=re.sub(r'[-#]?\d+$','',n.strip())
    d[g]+=int(u)+int(s)
  return d
b=load('${WORK:-/tmp/kvorum-threads}/before'); a=load('${WORK:-/tmp/kvorum-threads}/after')
tot=sum(a.values())-sum(b.values())
for g in sorted(a,key=lambda g:-(a[g]-b[g])):
  dv=a[g]-b[g]
  if dv>0: print("%-28s %6.2f s  %5.1f%%"%(g,dv/100,100*dv/tot))
print("total %.2f s"%(tot/100))
PY
