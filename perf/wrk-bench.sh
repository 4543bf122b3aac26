#!/usr/bin/env bash
# Saturation throughput of PUT and GET with wrk (closed loop), median of several runs, against a
# node or cluster that is already running on 127.0.0.1 (./kvorum run, or ./kvorum cluster start).
#
#   perf/wrk-bench.sh [URL] [RUNS] [SECONDS]       default http://127.0.0.1:8080 3 15
#
# Env: KEYS (100000), VALUE_BYTES (256), CONNECTIONS (64), THREADS (1), QUERY (e.g. "&ack=2&from=3").
# Preloads KEYS keys first, so GETs hit existing keys. Sends traffic to 127.0.0.1 only.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
url=${1:-http://127.0.0.1:8080}
runs=${2:-3}
secs=${3:-15}
conns=${CONNECTIONS:-64}
threads=${THREADS:-1}
case "$url" in http://127.0.0.1:*|http://localhost:*) ;; *) echo "only 127.0.0.1 targets" >&2; exit 2 ;; esac
command -v wrk >/dev/null || { echo "wrk is not installed (apt-get install wrk)" >&2; exit 2; }

echo "preloading ${KEYS:-100000} keys ..."
wrk -t2 -c64 -d120s -s "$here/wrk/preload.lua" "$url" -- 2 >/dev/null

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

for op in put get; do
  results=()
  for i in $(seq "$runs"); do
    out=$(wrk -t"$threads" -c"$conns" -d"${secs}s" --latency -s "$here/wrk/$op.lua" "$url")
    rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
    errors=$(awk '/Non-2xx/ {print $NF}' <<<"$out")
    p99=$(awk '$1=="99%" {print $2}' <<<"$out")
    echo "$op run $i: $rps req/s, p99 $p99, non-2xx ${errors:-0}"
    results+=("$rps")
  done
  echo "$op median: $(printf '%s\n' "${results[@]}" | median) req/s over $runs runs of ${secs}s, $conns connections"
done
