#!/bin/bash
# side by side: LevelDB's background thread at nice 0 (as today) vs nice 10 (reniced from outside by this script)
cd /work/main
export WRK2=/tmp/wrk2/wrk
O=/tmp/s13/nice
W=${W:-put}
renice_bg() {
  for i in $(seq 1 120); do
    P=$(pgrep -f -- '--node-id n1' | head -1)
    if [ -n "$P" ]; then
      T=$(for t in /proc/$P/task/*; do [ "$(cat $t/comm 2>/dev/null)" = "storage-writer-" ] && basename $t; done | sort -n | tail -n +2 | head -1)
      if [ -n "$T" ]; then renice -n 10 -p $T >> $O/renice.log 2>&1; echo "pid $P bg $T" >> $O/renice.log; return; fi
    fi
    sleep 0.5
  done
  echo "no bg thread found" >> $O/renice.log
}
for r in 1 2 3; do
  java -jar /tmp/s13/perf-head.jar run --jar /tmp/s13/node-head.jar --nodes 1 --workload $W --rate 25000 --duration 30s --warmup 20s --profile none --scrape-interval 0s --out $O/$W-nice0-r$r >/dev/null 2>&1
  renice_bg &
  java -jar /tmp/s13/perf-head.jar run --jar /tmp/s13/node-head.jar --nodes 1 --workload $W --rate 25000 --duration 30s --warmup 20s --profile none --scrape-interval 0s --out $O/$W-nice10-r$r >/dev/null 2>&1
  wait
done
echo finished
