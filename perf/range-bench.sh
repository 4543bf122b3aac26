#!/usr/bin/env bash
# Range read throughput (docs/http-api.md, ranges) through one node: preloads KEYS keys, then reads the whole range
# GET /v0/entities?start=key RUNS times with curl and prints entries/s and MB/s per run and their
# medians. Against a node or cluster already running on 127.0.0.1 (./kvorum run, or
# ./kvorum cluster start, which is 3 nodes with RF 3: every range merges all three nodes' streams).
#
#   perf/range-bench.sh [URL] [RUNS]             default http://127.0.0.1:8080 5
#
# Env: KEYS (1000000), VALUE_BYTES (100), PRELOAD (1; 0 skips it when the keys are there already).
# Each entry of the answer is "<key>\n<value>" and neither holds another newline, so the number of
# newlines in the de-chunked body is the number of entries. Sends traffic to 127.0.0.1 only.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
url=${1:-http://127.0.0.1:8080}
runs=${2:-5}
export KEYS=${KEYS:-1000000} VALUE_BYTES=${VALUE_BYTES:-100}
case "$url" in http://127.0.0.1:*|http://localhost:*) ;; *) echo "only 127.0.0.1 targets" >&2; exit 2 ;; esac
command -v curl >/dev/null || { echo "curl is not installed" >&2; exit 2; }

if [[ ${PRELOAD:-1} == 1 ]]; then
  command -v wrk >/dev/null || { echo "wrk is not installed (apt-get install wrk), needed to preload" >&2; exit 2; }
  echo "preloading $KEYS keys of $VALUE_BYTES bytes ..."
  # wrk runs for its whole -d even after preload.lua stopped sending, so stop it once each of its two
  # threads printed its "kvorum-preload <thread> <share> <written> done [<status>=<n> ...]" line.
  fifo=$(mktemp -u /tmp/kvorum-preload.XXXXXX)
  mkfifo "$fifo"
  wrk -t2 -c64 -d3600s -s "$here/wrk/preload.lua" "$url" -- 2 >"$fifo" &
  wrk_pid=$!
  threads_done=0 failed=
  while read -r tag _ _ _ state rest; do
    [[ $tag == kvorum-preload && $state == done ]] || continue
    failed+=${rest:+ $rest}
    (( ++threads_done == 2 )) && break
  done <"$fifo"
  kill "$wrk_pid" 2>/dev/null || true
  wait "$wrk_pid" 2>/dev/null || true
  rm -f "$fifo"
  (( threads_done == 2 )) || { echo "preload: wrk stopped before every key was answered" >&2; exit 1; }
  [[ -z $failed ]] || { echo "preload: some keys were not written, non-2xx answers (status=count):$failed" >&2; exit 1; }
fi

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

body=$(mktemp /tmp/kvorum-range.XXXXXX)
trap 'rm -f "$body"' EXIT
eps=() mbps=()
for i in $(seq "$runs"); do
  read -r bytes secs < <(curl -sS --fail -o "$body" -w '%{size_download} %{time_total}\n' "$url/v0/entities?start=key")
  entries=$(tr -cd '\n' < "$body" | wc -c)
  e=$(awk -v n="$entries" -v t="$secs" 'BEGIN {printf "%.0f", n / t}')
  m=$(awk -v b="$bytes" -v t="$secs" 'BEGIN {printf "%.1f", b / t / 1e6}')
  echo "run $i: $entries entries, $bytes bytes in ${secs}s: $e entries/s, $m MB/s"
  eps+=("$e") mbps+=("$m")
done
echo "median of $runs runs: $(printf '%s\n' "${eps[@]}" | median) entries/s, $(printf '%s\n' "${mbps[@]}" | median) MB/s"
