#!/bin/bash
# Jars: base.jar = main at abb5979; combine*.jar = a throwaway flat-combining BatchingWriter (not kept); budget.jar = main at 223dcf5 (the body budget). Build a jar, copy it to the named path.
# JDK 17 ZGC vs JDK 25 (generational ZGC) vs JDK 25 + compact object headers, same node jar
set -u
OUT=$1; ROUNDS=${2:-3}
cd /work/main; export WRK2=/tmp/wrk2/wrk
J17=java; J25=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java
run() { # name java nodes extra...
  local name=$1 jv=$2 n=$3; shift 3
  $jv -jar perf/target/kvorum-perf.jar run --jar /tmp/s18/base.jar --profile none --scrape-interval 0s --nodes $n --workload put --saturation --duration 15s --warmup 10s "$@" --out $OUT/$name > $OUT/$name.log 2>&1
}
for r in $(seq 1 $ROUNDS); do
  java -jar perf/target/kvorum-perf.jar nginx --saturation --duration 15s --warmup 5s --out $OUT/r$r-nginx > $OUT/r$r-nginx.log 2>&1
  run r$r-j17-1n $J17 1
  run r$r-j25-1n $J25 1
  run r$r-j25coh-1n $J25 1 --node-jvm-opt=-XX:+UseCompactObjectHeaders
  run r$r-j25coh-3n $J25 3 --node-jvm-opt=-XX:+UseCompactObjectHeaders
  run r$r-j25-3n $J25 3
  run r$r-j17-3n $J17 3
done
