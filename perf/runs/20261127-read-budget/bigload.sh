#!/bin/bash
# Many clients reading large values: NODES local nodes (RF 3, or 1 for one node), 40 keys of
# 4,000,000 random bytes written through n1, then wrk GETs them through n1 from CONNS connections
# for 20 s. Prints wrk's figures, its count of answers by status, and n1's replica and storage
# counters. From the repository root after `mvn -DskipTests install`, Debian's wrk installed.
# usage: bigload.sh JAR NODES CONNS [JVM_OPTS]
JAR=$1; N=$2; C=$3; OPTS=${4:-}
pkill -f 'cluster n1=127.0.0.1:18080'; sleep 2
mkdir -p ${WORK:-/tmp/kvorum-bigload}; cd ${WORK:-/tmp/kvorum-bigload} && rm -rf d* && ([ -f big ] || head -c 4000000 /dev/urandom > big)
CL=""; for i in $(seq 1 $N); do CL="$CL${CL:+,}n$i=127.0.0.1:$((18079+i)):$((19079+i))"; done
for i in $(seq 1 $N); do (java -Xmx1g -XX:+UseZGC $OPTS -jar $JAR --cluster $CL --node-id n$i --data-dir d$i > n$i.log 2>&1 &); done
for i in $(seq 1 100); do curl -s -o /dev/null localhost:18080/v0/status && break; sleep 0.2; done; sleep 3
for k in $(seq 0 39); do curl -s -o /dev/null -w "%{http_code} " -XPUT --data-binary @big "localhost:18080/v0/entity?id=key$k"; done | tr ' ' '\n' | sort | uniq -c | tr '\n' ' '; echo
cd /work/main/perf/wrk && KEYS=40 wrk -t2 -c$C -d20s --timeout 10s -s get.lua http://127.0.0.1:18080 | grep -E 'Requests/sec|kvorum-status|Latency|Transfer'
for i in $(seq 1 $N); do curl -s -o /dev/null -w "%{http_code} " localhost:$((18079+i))/v0/status; done; echo
grep -h -c 'ERROR' ${WORK:-/tmp/kvorum-bigload}/n*.log | tr '\n' ' '; echo errors
curl -s localhost:18080/metrics | grep -E '^kvorum_(digest|replica|storage_rejected|storage_reads|storage_queue)' | grep -v ' 0.0$' | head -30
pkill -f 'cluster n1=127.0.0.1:18080'
