#!/bin/bash
# Jars: base.jar = main at abb5979; combine*.jar = a throwaway flat-combining BatchingWriter (not kept); budget.jar = main at 223dcf5 (the body budget). Build a jar, copy it to the named path.
# demo.sh JAR NAME CONNS: a node with a 256 MiB heap, CONNS clients each holding a 4 MB body unfinished, then probes
JAR=$1; NAME=$2; N=${3:-100}
D=/tmp/s18/demo-$NAME; rm -rf $D; mkdir -p $D
java -Xms256m -Xmx256m -XX:+UseZGC -jar $JAR --cluster n1=127.0.0.1:18080:19080 --data-dir $D/data > $D/node.log 2>&1 &
PID=$!
for i in $(seq 1 100); do curl -s -o /dev/null http://127.0.0.1:18080/v0/status && break; sleep 0.2; done
python3 /tmp/s18/slowbody.py 18080 $N 2>&1 | tee $D/attack.txt
echo "node alive: $(kill -0 $PID 2>/dev/null && echo yes || echo no)"
grep -c -i 'OutOfDirectMemory\|OutOfMemory' $D/node.log | sed 's/^/OOM lines in log: /'
grep -i -m3 'OutOfDirectMemory\|OutOfMemory' $D/node.log | cut -c1-250
kill $PID 2>/dev/null; wait $PID 2>/dev/null
