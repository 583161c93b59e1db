"""cgins.py CALLGRIND_FILE: each instruction's own count (Ir) from a callgrind profile written with --dump-instr=yes,
as "address count" lines (hex address). Position lines are "instr line cost", absolute (0x...) or relative
(+N, -N, *); the line after a calls= line is the call's inclusive cost and is skipped."""
import collections
import sys

cost = collections.Counter()
last = 0
skip = False
for line in open(sys.argv[1], errors='replace'):
    line = line.rstrip('\n')
    if not line:
        continue
    if line.startswith('calls='):
        skip = True
        continue
    c = line[0]
    if c.isdigit() or c in '+-*':
        parts = line.split()
        p = parts[0]
        if p[0] == '+':
            addr = last + int(p[1:], 0)
        elif p[0] == '-':
            addr = last - int(p[1:], 0)
        elif p == '*':
            addr = last
        else:
            addr = int(p, 0)
        last = addr
        if skip:
            skip = False
            continue
        if len(parts) > 2:
            cost[addr] += int(parts[2])
    else:
        skip = False
for a, v in cost.items():
    print('%x %d' % (a, v))
