#!/bin/bash
# Client latency at a fixed rate while anti-entropy repairs an empty replica, against the same
# cluster with nothing to repair. One round:
#   1. n1, n2 up, n3 down; hints off (--hint-max-age 0), so that only anti-entropy can repair n3;
#      N keys of 256 bytes preloaded through n1 at ack=2&from=3.
#   2. n3 starts with an empty data dir; once it is ready, wrk2 -R RATE mixed (half GET, half PUT,
#      the nodes' default quorum 2 of 3) through n1 for DUR s: "repairing".
#   3. wait until n3 has received no anti-entropy record for 15 s (the repair is done).
#   4. n3 restarts (SIGTERM, start: its JVM is as cold as in 2), and the same load runs: "repaired".
# Usage: WRK2=/path/to/wrk2 [JAR=...] [N=1000000] [RATE=10000] [DUR=40] [ROUNDS=3] [OUT=dir] [LABEL=...]
#        [NODE_OPTS="--anti-entropy-rate 5000"] [ONLY_REPAIRING=1] [DELAY=20] run.sh
set -u
cd "$(dirname "$0")/../../.."
JAR=${JAR:-node/target/kvorum-node.jar}; N=${N:-1000000}; RATE=${RATE:-10000}; DUR=${DUR:-40}
ROUNDS=${ROUNDS:-3}; OUT=${OUT:-perf/runs/20261128-repair-under-load}; D=${D:-/tmp/repair-under-load}
NODE_OPTS=${NODE_OPTS:-}; LABEL=${LABEL:-${NODE_OPTS:-defaults}}
: "${WRK2:?WRK2 must name a wrk2 binary}"
CL=n1=127.0.0.1:27081:27181,n2=127.0.0.1:27082:27182,n3=127.0.0.1:27083:27183
mkdir -p "$OUT"

start() {
  java -Xms1g -Xmx1g -XX:+UseZGC -XX:+AlwaysPreTouch -jar "$JAR" --cluster $CL --node-id "$1" --data-dir "$D/$1" \
    --hint-max-age 0 --anti-entropy-interval 5000 $NODE_OPTS >>"$D/log.$1" 2>&1 &
  echo $! >"$D/pid.$1"
  for _ in $(seq 300); do curl -sf -o /dev/null "http://127.0.0.1:2708${1#n}/v0/status" && return 0; sleep 0.2; done
  echo "$1 did not start" >&2; exit 1
}
stop() { kill -TERM "$(cat "$D/pid.$1")" 2>/dev/null; while kill -0 "$(cat "$D/pid.$1")" 2>/dev/null; do sleep 0.1; done; }
received() { # n3's anti-entropy records received so far
  curl -s http://127.0.0.1:27083/metrics | awk '/^kvorum_anti_entropy_records_total\{direction="received"/ { print int($2) }'
}
window() { # $1: label; prints one line of figures
  local f="$OUT/wrk2-${LABEL// /_}-round$r-$1.txt" before after
  before=$(received)
  KEYS=$N VALUE_BYTES=256 "$WRK2" -t2 -c64 -d"${DUR}s" -R"$RATE" --latency -s perf/wrk/mixed.lua http://127.0.0.1:27081 >"$f" 2>&1
  after=$(received)
  awk -v LABEL="$LABEL" -v label="$1" -v r="$r" -v moved=$((after - before)) '
    /^ *50.000%/ { p50 = $2 } /^ *99.000%/ { p99 = $2 } /^ *99.900%/ { p999 = $2 } /^ *100.000%/ { max = $2 }
    /Requests\/sec:/ { rate = $2 } /Non-2xx/ { non2xx = $NF } /Socket errors/ { sock = $0 }
    END { printf "[%s] round %s %-9s rate %s  p50 %s  p99 %s  p99.9 %s  max %s  non-2xx %s  records repaired in the window %d %s\n",
          LABEL, r, label, rate, p50, p99, p999, max, non2xx + 0, moved, sock }' "$f" | tee -a "$OUT/rounds.txt"
}

for r in $(seq "$ROUNDS"); do
  pkill -f "data-dir $D/" 2>/dev/null; sleep 1; rm -rf "$D"; mkdir -p "$D"
  start n1; start n2
  KEYS=$N VALUE_BYTES=256 QUERY="&ack=2&from=3" "$WRK2" -t2 -c64 -d600s -R10000000 -s perf/wrk/preload.lua \
    http://127.0.0.1:27081 -- 2 >"$D/preload.txt" 2>&1 &
  wrk=$!
  until [[ $(grep -c ' done' "$D/preload.txt") == 2 ]]; do kill -0 $wrk 2>/dev/null || break; sleep 0.5; done
  kill $wrk 2>/dev/null; wait $wrk 2>/dev/null
  grep ' done' "$D/preload.txt" | tee -a "$OUT/rounds.txt"
  start n3
  sleep "${DELAY:-0}" # DELAY=S: the window starts S seconds after n3 is ready (the repair has begun)
  window repairing
  if [[ -n ${ONLY_REPAIRING:-} ]]; then # the repairing window alone (a slow repair takes minutes to end)
    for n in n1 n2 n3; do stop $n; done
    continue
  fi
  last=$(received); still=0
  for _ in $(seq 300); do
    sleep 1; now=$(received)
    if [[ $now == "$last" ]]; then still=$((still + 1)); else still=0; last=$now; fi
    ((still >= 15)) && break
  done
  echo "[$LABEL] round $r: n3 received $last records in all; repair ended $(date -u +%H:%M:%S)" | tee -a "$OUT/rounds.txt"
  stop n3; start n3
  window repaired
  for n in n1 n2 n3; do stop $n; done
done
