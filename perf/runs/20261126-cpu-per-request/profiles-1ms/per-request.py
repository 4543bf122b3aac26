"""Splits a collapsed profile by thread and by kernel/user time, in µs of CPU per request.

usage: python3 per-request.py PROFILE.collapsed.gz REQUESTS [INTERVAL_MS]
The event loops are Netty's threads, the writer the storage writer; kernel time is named by the
system call it is under. Warm-up (JIT) is in the profile too: compare the rows, not the totals.
"""
import collections
import gzip
import sys

path, requests = sys.argv[1], float(sys.argv[2])
interval_ms = float(sys.argv[3]) if len(sys.argv) > 3 else 1.0
rows = collections.Counter()
for line in gzip.open(path, 'rt'):
    stack, n = line.rsplit(' ', 1)
    frames = stack.split(';')
    top = frames[1] if len(frames) > 1 else frames[0]
    if 'ThreadExecutorMap' in top or 'FastThreadLocalRunnable' in top:
        thread = 'event loop'
    elif 'BatchingWriter' in top:
        thread = 'storage writer'
    elif frames[0].startswith('clone3'):
        head = ';'.join(frames[:8])
        thread = ('leveldb compaction' if 'leveldb' in head else 'jit' if 'Compile' in stack
                  else 'gc' if any(g in head for g in ('GC', 'ZDriver', 'Gang', 'ZWorker', 'Concurrent')) else 'jvm')
    else:
        thread = 'other'
    kernel = [i for i, f in enumerate(frames) if f.endswith('_[k]')]
    where = ('kernel: ' + frames[kernel[0] - 1][:28]) if kernel and thread in ('event loop', 'storage writer') else (
        'user' if thread in ('event loop', 'storage writer') else '')
    rows[(thread, where)] += int(n)
for (thread, where), n in rows.most_common(20):
    print('%-16s %-38s %6.2f µs/request' % (thread, where, n * interval_ms * 1000 / requests))
