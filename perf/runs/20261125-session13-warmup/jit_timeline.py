"""Per second of the measured window: n1's PUTs over 10 ms (its own histogram), which nodes ended an
anti-entropy round, and how many methods each node's JIT compiled (all tiers / C2), from
-XX:+PrintCompilation lines in nX.log. Usage: jit_timeline.py RUN_DIR"""
import collections, csv, datetime, re, sys

run = sys.argv[1]
rows = list(csv.DictReader(open(f'{run}/metrics.csv')))
t0 = min(int(x['epoch_ms']) for x in rows)
snap = collections.defaultdict(dict)
for x in rows:
    key = (x['node'], int(x['epoch_ms']))
    n, l, v = x['name'], x['labels'], float(x['value'])
    if n == 'kvorum_request_duration_seconds_bucket' and l in ('le=+Inf;op=put', 'le=0.01;op=put'):
        snap[key][l] = v
    elif n == 'kvorum_anti_entropy_rounds_total':
        snap[key]['ae'] = snap[key].get('ae', 0) + v
slow, ae = {}, collections.defaultdict(list)
for node in ('n1', 'n2', 'n3'):
    ts = sorted(t for (nn, t) in snap if nn == node)
    for a, b in zip(ts, ts[1:]):
        s, p = snap[(node, b)], snap[(node, a)]
        sec = int((b - t0) / 1000)
        if node == 'n1':
            slow[sec] = (s['le=+Inf;op=put'] - p['le=+Inf;op=put']) - (s['le=0.01;op=put'] - p['le=0.01;op=put'])
        if s.get('ae', 0) > p.get('ae', 0):
            ae[sec].append(node)
compiles = {}
for node in ('n1', 'n2', 'n3'):
    first = open(f'{run}/gc-{node}.log').readline()
    m = re.match(r'\[(.*?)\]\[([\d.]+)s\]', first)
    start = datetime.datetime.strptime(m.group(1), '%Y-%m-%dT%H:%M:%S.%f%z').timestamp() * 1000 - float(m.group(2)) * 1000
    c = collections.Counter()
    c2 = collections.Counter()
    for line in open(f'{run}/{node}.log'):
        m = re.match(r'\s*(\d+)\s+\d+\s+\S*\s+(\d)\s+\S+\s+\(', line)
        if m:
            sec = int((start + int(m.group(1)) - t0) // 1000)
            c[sec] += 1
            c2[sec] += m.group(2) == '4'
    compiles[node] = (c, c2)
print('second  n1-puts>10ms  rounds-ended  compiled(all/C2): n1  n2  n3')
for sec in sorted(slow):
    cols = '  '.join(f'{compiles[n][0][sec]:4d}/{compiles[n][1][sec]:<3d}' for n in ('n1', 'n2', 'n3'))
    print(f'{sec:6d}  {slow[sec]:12.0f}  {",".join(ae[sec]) or "-":12s}  {cols}')
