#!/bin/bash
# Are later rounds cheap? Anti-entropy every 30 s: each node's first round (24-36 s after start) falls in
# the preload or warm-up, its second and third in a 60 s window. JIT compilations printed (PrintCompilation).
cd /work/main
export WRK2=/tmp/wrk2/wrk
O=/tmp/s13/ae30
for r in 1 2; do
  java -jar /tmp/s13/perf-head.jar run --jar /tmp/s13/node-head.jar --nodes 3 --workload put --rate 10000 --duration 60s --warmup 20s --profile none \
    --node-option=--anti-entropy-interval=30000 --node-jvm-opt=-XX:+PrintCompilation --out $O/3n-put-10k-ae30s-r$r >/dev/null 2>&1
done
echo finished
