#!/usr/bin/env python3
"""Reads run.sh's output folder: per Firefox launch, how long its lookups took (nsHostResolver's "Resolving host"
to "OnResolveHostComplete", address lookups only), and for the DoH launches when each TRR query reached the wire
(the first data packet to the resolver's port 443 after TRR::SendHTTPRequest, a lower bound of the wait) and how
long the resolver took to answer on the wire (a query packet to the next answer packet). Usage: analyse.py DIR"""
import bisect, re, statistics, sys
from datetime import datetime, timezone

d = sys.argv[1]
RESOLVER = '192.0.2.2'  # the lab's server side (lab/netns.ts), where its resolver listens

def ts(line):
    try:
        return datetime.strptime(line[:26], '%Y-%m-%d %H:%M:%S.%f').replace(tzinfo=timezone.utc).timestamp()
    except ValueError:  # appended lines from two threads can interleave
        return None

def summary(xs):
    xs = sorted(xs)
    return f'n={len(xs)} median {statistics.median(xs):.0f} p90 {xs[int(0.9 * len(xs))]:.0f} max {xs[-1]:.0f} ms'

queries, answers = [], []
for line in open(f'{d}/cap.tsv'):
    t, src, dst, sport, dport, tlen = line.rstrip('\n').split('\t')
    if not tlen or int(tlen) == 0:
        continue
    if dst == RESOLVER and dport == '443':
        queries.append(float(t))
    if src == RESOLVER and sport == '443':
        answers.append(float(t))

launches = {}
for line in open(f'{d}/ff.moz_log', errors='replace'):
    m = re.search(r'\[Parent (\d+):', line)
    t = ts(line)
    if m and t is not None:
        launches.setdefault(m[1], []).append((t, line))

for pid, lines in launches.items():
    start, took, sends = {}, [], []
    for t, line in lines:
        m = re.search(r'Resolving host \[([^\]]+)\]<[^>]*> type 0', line)
        if m and 'bypassing' not in line and m[1] not in start:
            start[m[1]] = t
            continue
        m = re.search(r'OnResolveHostComplete: (\S+)', line)
        if m and start.get(m[1]) is not None:
            took.append((t - start[m[1]]) * 1000)
            start[m[1]] = None
        if 'SendHTTPRequest resolve' in line:
            sends.append(t)
    if not took:
        continue
    path = 'DoH (TRR)' if sends else 'Do53 (native)'
    print(f'Firefox launch {pid}, {path}: lookups {summary(took)}')
    if sends:
        waits = [(queries[i] - t) * 1000 for t in sends if (i := bisect.bisect_left(queries, t)) < len(queries)]
        print(f'  TRR query to the wire (lower bound): {summary(waits)}; over 100 ms: {sum(w > 100 for w in waits)} of {len(waits)}')

rtt = [(answers[i] - t) * 1000 for t in queries if (i := bisect.bisect_left(answers, t)) < len(answers)]
print(f'DoH on the wire, a query packet to the next answer packet: {summary(rtt)}')
do53 = [float(l.split('\t')[1]) * 1000 for l in open(f'{d}/do53.tsv') if l.strip() and l.split('\t')[1].strip()]
print(f'Do53 on the wire (tshark dns.time): {summary(do53)}')
print('(The capture sees answers before the lab\'s inbound delay, so "on the wire" is about half the RTT.)')
