#!/usr/bin/env python3
"""One line per run folder under OUT: p50/p99 from the load tool, and the servers' CPU and waits per request."""
import json, os, sys
out = sys.argv[1]
for d in sorted(os.listdir(out)):
    f = os.path.join(out, d, 'result.json')
    if not os.path.isfile(f):
        continue
    j = json.load(open(f))
    c = j.get('cpu') or {}
    req = j['requests']
    groups = [g for gs in (c.get('threadsByServer') or {}).values() for g in gs]
    cpu = sum(g['cpuSeconds'] for g in groups) * 1e6 / req
    wait = sum(g['waitSeconds'] for g in groups) * 1e6 / req
    sched = sum(g['scheduled'] for g in groups) / req
    p = j['percentilesMs']
    print("%-16s rate %7.0f p50 %5.2f p90 %5.2f p99 %5.2f ms | per request: cpu %5.1f us, waited %5.1f us, given a core %.2f times"
          % (d, j['achievedRate'], p['p50'], p['p90'], p['p99'], cpu, wait, sched))
