"""modes.py LOG...: for each -XX:+LogCompilation file, the C2 compiles of RecursiveShapesBench$OursFork::fib in
order, each marked CUTOFF when C2 stopped inlining in it for its node budget (NodeCountInliningCutoff), and whether
Joining::forkGeneral was inlined into it (PERFORMANCE_TRACKING 94)."""
import re
import sys

for path in sys.argv[1:]:
    text = open(path, errors='replace').read()
    out = []
    for m in re.finditer(r"<task compile_id='(\d+)' method='dev\.threadpool\.jmh\.RecursiveShapesBench\$OursFork fib"
                         r"[^>]*>.*?</task>", text, re.S):
        task = m.group(0)
        head = task[:task.index('>')]
        if "level=" in head and "level='4'" not in head:  # C2's tasks carry no level, or 4
            continue
        ids = dict(re.findall(r"<method id='(\d+)' holder='\d+' name='(\w+)'", task))
        general = any(ids.get(c) == 'forkGeneral' and ok
                      for c, ok in re.findall(r"<call method='(\d+)'[^>]*>\s*(?:<[^>]*/>\s*)*?(<inline_success)?", task))
        mark = 'CUTOFF' if 'NodeCountInliningCutoff' in task else 'ok'
        out.append(f"{m.group(1)}:{mark}{'+forkGeneral' if general else ''}")
    print(path, ' '.join(out))
