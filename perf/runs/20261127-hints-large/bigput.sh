#!/bin/bash
# Many clients writing large values, as ../20261127-read-budget/bigput.sh, printing every node's
# replica, storage and hint counters afterwards. NODES local nodes (RF 3), 1 GiB heaps, wrk PUTs of
# 4,000,000-byte values to 40 keys through n1 from CONNS connections for 20 s. From the repository
# root after `mvn -DskipTests install`, Debian's wrk installed.
# usage: bigput.sh JAR NODES CONNS [JVM_OPTS [NODE_OPTS]]
JAR=$1; N=$2; C=$3; OPTS=${4:-}; NODE_OPTS=${5:-}
pkill -f 'cluster n1=127.0.0.1:18080'; sleep 2
mkdir -p /tmp/kvorum-bigload; cd /tmp/kvorum-bigload && rm -rf d*
CL=""; for i in $(seq 1 $N); do CL="$CL${CL:+,}n$i=127.0.0.1:$((18079+i)):$((19079+i))"; done
for i in $(seq 1 $N); do (java -Xmx1g -XX:+UseZGC $OPTS -jar $JAR --cluster $CL --node-id n$i --data-dir d$i $NODE_OPTS > n$i.log 2>&1 &); done
for i in $(seq 1 100); do curl -s -o /dev/null localhost:18080/v0/status && break; sleep 0.2; done; sleep 3
cd /work/main/perf/wrk && KEYS=40 VALUE_BYTES=4000000 wrk -t2 -c$C -d20s --timeout 10s -s put.lua http://127.0.0.1:18080 | grep -E 'Requests/sec|kvorum-status|Latency|Transfer'
for i in $(seq 1 $N); do curl -s -o /dev/null -w "%{http_code} " localhost:$((18079+i))/v0/status; done; echo
grep -h -c 'ERROR' /tmp/kvorum-bigload/n*.log | tr '\n' ' '; echo errors
for i in $(seq 1 $N); do
  echo "-- n$i"
  curl -s localhost:$((18079+i))/metrics | grep -E '^kvorum_(storage_rejected|storage_expired|replica_requests|hints_[a-z_]*)' | grep -v ' 0.0$'
done
pkill -f 'cluster n1=127.0.0.1:18080'
