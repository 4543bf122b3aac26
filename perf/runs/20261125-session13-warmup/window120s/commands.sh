#!/bin/bash
# Two long windows, 3 nodes, PUT at 10,000/s, every default: 120 s measured after 20 s of warm-up, so that
# each node's first anti-entropy round (48-72 s after start) and its second (about 60 s later) are both in it.
# The second run prints every JIT compilation of each node into its log (-XX:+PrintCompilation); the
# logs are not committed, jit-timeline.txt is what ../jit_timeline.py read from them.
cd /work/main
export WRK2=/tmp/wrk2/wrk
java -jar /tmp/s13/perf-head.jar run --jar /tmp/s13/node-head.jar --nodes 3 --workload put --rate 10000 \
  --duration 120s --warmup 20s --profile none --out /tmp/s13/long-r1
java -jar /tmp/s13/perf-head.jar run --jar /tmp/s13/node-head.jar --nodes 3 --workload put --rate 10000 \
  --duration 120s --warmup 20s --profile none --node-jvm-opt=-XX:+PrintCompilation --out /tmp/s13/long-jit
