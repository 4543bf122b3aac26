#!/bin/bash
# The rounds of rounds.txt (run from /work/main with WRK2 set). Three jars, built from e2d0ffb:
#   base.jar   as committed (LevelDB write buffer 16 MiB, Snappy)
#   wb1g.jar   LevelDbStore opens the records with a 1 GiB write buffer: no memtable flush in a run
#   nocomp.jar LevelDbOpener asks for CompressionType.NONE
# Each round: nginx, then the three jars, 1 node, PUT at 25,000/s, 20 s after 20 s of warm-up.
# ../20261126-cpu-per-request/ab.sh is the A/B script itself.
set -eu
bash perf/runs/20261126-cpu-per-request/ab.sh /tmp/s20/ab-wb 3 25000 1 put "nginx|nginx|" \
  "base|/tmp/s20/base.jar|" "wb1g|/tmp/s20/wb1g.jar|" "nocomp|/tmp/s20/nocomp.jar|"
