#!/bin/bash
# The rounds of rounds.txt: node jars of 190dfed (base) and of the change (reads on the caller's
# thread when the readers are idle), 1 node GET at 25,000/s and at saturation, 3 nodes GET at
# saturation, nginx in every round. Run from the repository root with WRK2 set, nothing else running.
# Only round 2 of "rate-final" and "sat-3n" is kept in this folder; every round's figures are in rounds.txt.
set -u
AB=perf/runs/20261126-cpu-per-request/ab.sh
O=perf/runs/20261127-core-waits/inline-reads
BASE=${BASE:-/tmp/jars/base.jar}
CAND=${CAND:-/tmp/jars/inline-reads2.jar}  # "rate", "sat" and "sat-b" ran an earlier build of the change
bash $AB $O/rate 3 25000 1 get "nginx|nginx|" "base|$BASE|" "inline|$CAND|"
bash $AB $O/sat 2 sat 1 get "nginx|nginx|" "base|$BASE|" "inline|$CAND|"
bash $AB $O/sat-b 2 sat 1 get "inline|$CAND|" "base|$BASE|" "nginx|nginx|"
bash $AB $O/rate-final 3 25000 1 get "nginx|nginx|" "inline|$CAND|" "base|$BASE|"
bash $AB $O/sat-3n 2 sat 3 get "nginx|nginx|" "base|$BASE|" "inline|$CAND|"
bash $AB $O/sat-3n-b 2 sat 3 get "inline|$CAND|" "base|$BASE|" "nginx|nginx|"
for d in rate sat sat-b rate-final sat-3n sat-3n-b; do echo "## $d"; python3 perf/runs/20261127-core-waits/summary.py $O/$d; done > $O/rounds.txt
