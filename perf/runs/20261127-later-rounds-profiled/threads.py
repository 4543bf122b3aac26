# Each thread group's time on a core per request answered (µs), per node and run, from the
# "Waiting for a core" tables of each run's report.md. usage: python3 threads.py [RUN_DIR ...]
import collections, glob, os, re, sys

runs = sys.argv[1:] or sorted(d for d in glob.glob(os.path.join(os.path.dirname(__file__) or '.', 'r*-o*')) if os.path.isdir(d))
rows = collections.defaultdict(dict)
for d in runs:
    text = open(os.path.join(d, 'report.md')).read()
    requests = int(re.search(r'\| requests \| ([\d,]+)', text).group(1).replace(',', ''))
    node = None
    for line in text.splitlines():
        m = re.match(r'\| (n\d) threads', line)
        if m:
            node = m.group(1)
            continue
        m = re.match(r'\| (\*\*all\*\*|[^|]+?) \| (\d+) \| ([\d.]+) s', line)
        if m and node:
            group = re.sub(r'the other \d+ groups', 'the other groups', m.group(1).strip('*'))
            rows[(node, group)][d] = float(m.group(3)) * 1e6 / requests
names = [os.path.basename(d) for d in runs]
print('%-24s' % 'µs a request', ' '.join('%8s' % n for n in names))
for key in sorted(rows):
    print('%-24s' % (key[0] + ' ' + key[1]), ' '.join('%8.2f' % rows[key][d] if d in rows[key] else '%8s' % '-' for d in runs))
