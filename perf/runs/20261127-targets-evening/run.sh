#!/bin/bash
# Issue 16's targets again, later the same day (session 27), on the node jar of main (250e17c):
# every target in one batch, nginx measured beside each, 2 rounds. Run from /work/main with
# WRK2=/tmp/wrk2/wrk and nothing else running; usage: run.sh OUT JAR
set -u
OUT=$1; JAR=$2
A=perf/runs/20261126-cpu-per-request/ab.sh
for step in sat1p sat1g r25p r25g sat3p sat3g; do
  case $step in
    sat1p) bash $A $OUT/$step 2 sat 1 put "nginx|nginx|" "put1n|$JAR|" ;;
    sat1g) bash $A $OUT/$step 2 sat 1 get "nginx|nginx|" "get1n|$JAR|" ;;
    r25p)  bash $A $OUT/$step 2 25000 1 put "nginx|nginx|" "put1n|$JAR|" ;;
    r25g)  bash $A $OUT/$step 2 25000 1 get "nginx|nginx|" "get1n|$JAR|" ;;
    sat3p) bash $A $OUT/$step 2 sat 3 put "nginx|nginx|" "put3n|$JAR|" ;;
    sat3g) bash $A $OUT/$step 2 sat 3 get "nginx|nginx|" "get3n|$JAR|" ;;
  esac > /dev/null
  echo "## $step"; cat $OUT/$step/out.txt; echo
done
# Then, the same session: 3 nodes at 10,000/s, p99 under 10 ms (no nginx: the target is absolute)
#   bash $A $OUT/r10k3p 2 10000 3 put "put3n|$JAR|"; bash $A $OUT/r10k3g 2 10000 3 get "get3n|$JAR|"
