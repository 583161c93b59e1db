"""persplit.py OUT: from a vgann.sh directory, the worker thread's instructions (the profile file with the most),
split by the C2 methods HotSpot printed: each method's instructions and entries (the count of its first
instruction), and the printed methods' instructions per entry of Joining.joinFork, which every split enters once
(a fork's join): instructions a split in the final compiled code, the fork inlined into the user's recursion or its
lambda. Valid when those methods ran most of the splits: the share of the thread outside them is printed too."""
import glob
import os
import re
import subprocess
import sys

out = sys.argv[1]
files = [f for f in glob.glob(os.path.join(out, 'cg-*'))]


def total(f):
    for line in open(f, errors='replace'):
        if line.startswith(('summary:', 'totals:')):
            return int(line.split()[1])
    return 0


worker = max(files, key=total)
ins = subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__) or '.', 'cgins.py'), worker],
                     capture_output=True, text=True, check=True).stdout
d = {}
for line in ins.split('\n'):
    if line:
        a, c = line.split()
        d[int(a, 16)] = int(c)
text = open(os.path.join(out, 'out.txt'), errors='replace').read().split('\n')
methods = []
for i, line in enumerate(text):
    if line.startswith('Compiled method (c2)'):
        for j in range(i + 1, i + 4):
            m = re.search(r'main code\s+\[0x([0-9a-f]+),0x([0-9a-f]+)\]', text[j])
            if m:
                methods.append((line.split()[-3], int(m.group(1), 16), int(m.group(2), 16)))
                break
all_ir = sum(d.values())
printed = 0
joins = 0
for name, s, e in methods:
    inside = sorted((a, c) for a, c in d.items() if s <= a < e)
    ir = sum(c for _, c in inside)
    entries = max((c for a, c in inside[:8]), default=0)
    printed += ir
    if name.endswith('Joining::joinFork'):
        joins += entries
    print('%-70s %14d instructions %12d entries' % (name, ir, entries))
print('worker thread %s: %d instructions, %.1f %% in the printed C2 methods' % (os.path.basename(worker), all_ir,
                                                                              100.0 * printed / all_ir))
if joins:
    print('printed C2 instructions per joinFork entry (a split): %.1f' % (printed / joins))
