#!/bin/bash
# How many classes do the nodes load around their first anti-entropy round? 3 nodes, PUT at 10,000/s, every
# default, 20 s warm-up, each class load logged to the node's stdout (nX.log, not committed);
# classload-timeline.txt is what ../classload_timeline.py read from it. Perf jar of b7d8023.
cd /work/main
export WRK2=/tmp/wrk2/wrk
java -jar /tmp/s13/perf-b7d.jar run --jar /tmp/s13/node-head.jar --nodes 3 --workload put --rate 10000 --duration 30s \
  --warmup 20s --profile none --node-jvm-opt=-Xlog:class+load=info:stdout:uptime --out /tmp/s13/classload
