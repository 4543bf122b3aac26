#!/bin/bash
# 3 nodes RF 3, preload N small records, join n4; prints the join's duration
JAR=${JAR:-node/target/kvorum-node.jar}; N=${N:-50000}; D=${D:-/tmp/join-side-by-side}; mkdir -p $D; cp "$(dirname "$0")/preload.py" $D/
rm -rf $D/d* $D/log.*
CL=n1=127.0.0.1:38401:39401,n2=127.0.0.1:38402:39402,n3=127.0.0.1:38403:39403
for i in 1 2 3; do java -Xmx512m -XX:+UseZGC -jar $JAR --cluster $CL --node-id n$i --data-dir $D/dn$i --replication-factor 3 > $D/log.n$i 2>&1 & echo $! > $D/pid.n$i; done
for i in $(seq 100); do curl -s -o /dev/null http://127.0.0.1:38403/v0/status && break; sleep 0.3; done
t0=$(date +%s); python3 $D/preload.py 38401 $N; echo "preload $N in $(( $(date +%s)-t0 )) s"
t0=$(date +%s.%N)
java -Xmx512m -XX:+UseZGC -jar $JAR --cluster n4=127.0.0.1:38404:39404,$CL --node-id n4 --data-dir $D/dn4 --join > $D/log.n4 2>&1 & echo $! > $D/pid.n4
for i in $(seq 600); do
  s=$(curl -s http://127.0.0.1:38401/v0/cluster | python3 -c 'import json,sys; m=json.load(sys.stdin); print([x["state"] for x in m["members"] if x["id"]=="n4"])' 2>/dev/null)
  [ "$s" = "['normal']" ] && break
  [ $i = 20 ] && jstack $(cat $D/pid.n4) > $D/jstack.n4.txt 2>&1
  sleep 0.5
done
echo "join took $(echo "$(date +%s.%N)-$t0" | bc) s; state $s"
grep -E "joining|took" $D/log.n4 | cut -c1-200 | tail -6
for i in 1 2 3 4; do kill $(cat $D/pid.n$i) 2>/dev/null; done; sleep 2
