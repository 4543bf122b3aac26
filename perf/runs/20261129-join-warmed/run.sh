#!/bin/bash
# The join's pace at 10,000 requests/s on a warmed cluster: perf join --warmup with node jars that
# differ only in Tuning.Changes.recordsPerSecond (20000 as shipped, 5000), interleaved rounds.
# usage: run.sh OUT ROUNDS KEYS WARMUP JAR...   (run from the repository, WRK2 set)
set -u
OUT=$1; ROUNDS=$2; KEYS=$3; WARMUP=$4; shift 4
mkdir -p "$OUT"
for r in $(seq 1 "$ROUNDS"); do
  for jar in "$@"; do
    name=$(basename "$jar" .jar)
    d=$OUT/r$r-$name
    ./kvorum perf join --jar "$jar" --keys "$KEYS" --value-bytes 100 --rate 10000 --load-duration 60s \
        --warmup "$WARMUP" --out "$d" > "$d.log" 2>&1
    echo "r$r $name $(grep -E '^\| (before|the first)' "$d/join.md" | tr '\n' ' ') $(grep -E '^\| 3 members' "$d/join.md")"
  done
done | tee -a "$OUT/rounds.txt"
