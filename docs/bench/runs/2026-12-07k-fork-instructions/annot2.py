"""annot2.py PRINT_OUTPUT INS KEY: the first C2 method whose "Compiled method (c2)" line of PRINT_OUTPUT contains
KEY, decoded with objdump from the bytes HotSpot prints without hsdis, each instruction with its count from INS
(cgins.py), as "count address instruction" lines."""
import sys, re, subprocess
printf, insf, key = sys.argv[1], sys.argv[2], sys.argv[3]
lines = open(printf, errors='replace').read().split('\n')
i = next(k for k, l in enumerate(lines) if l.startswith('Compiled method (c2)') and key in l)
code = bytearray(); start = None; inmc = False
for j in range(i + 1, len(lines)):
    l = lines[j]
    if l.startswith('Compiled method'): break
    if '[MachCode]' in l: inmc = True
    if '[/MachCode]' in l: break
    m = re.match(r'\s*0x([0-9a-f]+): ([0-9a-f |]+)$', l)
    if inmc and m:
        addr = int(m.group(1), 16)
        if start is None: start = addr
        if addr == start + len(code):
            code += bytes.fromhex(m.group(2).replace('|', '').replace(' ', ''))
open('/tmp/w/code2.bin', 'wb').write(code)
d = {}
for l in open(insf):
    a, c = l.split(); d[int(a, 16)] = int(c)
dis = subprocess.run(['objdump', '-D', '-b', 'binary', '-m', 'i386:x86-64', '--adjust-vma=0x%x' % start, '/tmp/w/code2.bin'], capture_output=True, text=True).stdout
for l in dis.split('\n'):
    m = re.match(r'\s*([0-9a-f]+):\s+((?:[0-9a-f]{2} )+)\s*(.*)', l)
    if m:
        a = int(m.group(1), 16)
        print('%10d %x  %s' % (d.get(a, 0), a, m.group(3)))
