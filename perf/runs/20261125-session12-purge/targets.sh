#!/bin/bash
# Session 12's target batch: the issue's fixed rates, all node defaults (anti-entropy and purge every 60 s),
# 20 s warm-up; the paced-purge jar and the previous one side by side for the PUT rows. Nothing else running.
cd /work/main
export WRK2=/tmp/wrk2/wrk
P="java -jar /tmp/s12/perf-head.jar"
R=/tmp/s12/targets
lat() { sed -n '/## Latency/,/latency.svg/p' $1/report.md | sed -n 5p; }
for r in 1 2 3; do
  $P nginx --rate 25000 --duration 30s --warmup 20s --out $R/nginx-25k-r$r > /dev/null 2>&1
  echo "r$r nginx-25k $(lat $R/nginx-25k-r$r)"
  for c in 1:put:25000:paced 1:put:25000:head 1:get:25000:paced 3:put:10000:paced 3:put:10000:head 3:get:10000:paced; do
    IFS=: read n w rate jar <<< "$c"
    out=$R/${n}n-$w-$((rate/1000))k-$jar-r$r
    extra=""; [ $n = 1 ] && extra="--scrape-interval 0s"
    $P run --jar /tmp/s12/node-$jar.jar --nodes $n --workload $w --rate $rate --duration 30s --warmup 20s --profile none $extra --out $out > /dev/null 2>&1
    echo "r$r ${n}n-$w-$((rate/1000))k-$jar $(lat $out)"
  done
done
echo ALLDONE
