"""Per second of the measured window: classes each node loaded (-Xlog:class+load:stdout:uptime lines in nX.log)."""
import collections, csv, datetime, re, sys
run = sys.argv[1]
rows = list(csv.DictReader(open(f'{run}/metrics.csv')))
t0 = min(int(x['epoch_ms']) for x in rows)
counts = {}
for node in ('n1', 'n2', 'n3'):
    first = open(f'{run}/gc-{node}.log').readline()
    m = re.match(r'\[(.*?)\]\[([\d.]+)s\]', first)
    start = datetime.datetime.strptime(m.group(1), '%Y-%m-%dT%H:%M:%S.%f%z').timestamp() * 1000 - float(m.group(2)) * 1000
    c = collections.Counter()
    for line in open(f'{run}/{node}.log', errors='replace'):
        m = re.match(r'\[([\d.]+)s\] \S+ source:', line)
        if m:
            c[int((start + float(m.group(1)) * 1000 - t0) // 1000)] += 1
    counts[node] = c
secs = sorted(set().union(*[set(c) for c in counts.values()]))
print('second  classes loaded: n1 n2 n3')
for s in secs:
    if s >= -5:
        print(f'{s:6d}  ' + '  '.join(f'{counts[n][s]:5d}' for n in ('n1', 'n2', 'n3')))
print('before the window:', {n: sum(v for k, v in counts[n].items() if k < 0) for n in counts})
print('in the window:', {n: sum(v for k, v in counts[n].items() if k >= 0) for n in counts})
