#!/bin/bash
# Where the time of a request at 25,000/s goes beyond its CPU: nginx, the Netty floor and one node,
# PUT and GET, interleaved; every run's report has the "Waiting for a core" tables (and the node's
# "Time inside the node"). Run from the repository root with WRK2 set; nothing else running.
# usage: rounds.sh OUT ROUNDS
set -u
OUT=$1; ROUNDS=$2
P="java -jar perf/target/kvorum-perf.jar"
L="--rate 25000 --duration 20s"
mkdir -p "$OUT"
for r in $(seq 1 "$ROUNDS"); do
  for wl in put get; do
    $P nginx --workload $wl $L --warmup 5s --out "$OUT/r$r-nginx-$wl" > "$OUT/r$r-nginx-$wl.log" 2>&1
    $P netty --workload $wl $L --warmup 20s --out "$OUT/r$r-netty-$wl" > "$OUT/r$r-netty-$wl.log" 2>&1
    $P run --profile none --scrape-interval 1s --nodes 1 --workload $wl $L --warmup 20s --out "$OUT/r$r-node-$wl" > "$OUT/r$r-node-$wl.log" 2>&1
  done
done
