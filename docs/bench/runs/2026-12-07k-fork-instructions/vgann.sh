#!/bin/bash
# vgann.sh OUT CLASSPATH SIDE [RUNS] [SHAPE]: one SplitCost JVM under callgrind, one profile file per thread with
# per-instruction counts (--dump-instr), and the final C2 code of the user's recursion, its lambda and
# Joining.joinFork printed (without hsdis HotSpot prints the bytes; annot2.py decodes them with objdump).
# About 4-8 minutes on this box (valgrind runs the JVM's threads one at a time, about 100x slower).
# Then: python3 cgins.py OUT/cg-NN > ins.txt (NN: the thread with the most instructions, the worker) and
#       python3 annot2.py OUT/out.txt ins.txt "OursFork::fib" (each instruction with how often it ran).
out=$1; cp=$2; side=$3; runs=${4:-5}; shape=${5:-fib}
mkdir -p "$out" && cd "$out" || exit 1
valgrind --tool=callgrind --separate-threads=yes --dump-instr=yes --callgrind-out-file="$PWD/cg" \
  --smc-check=all-non-file "${JAVA:-java}" --enable-native-access=ALL-UNNAMED -Xms1g -Xmx1g \
  -XX:+UnlockDiagnosticVMOptions \
  '-XX:CompileCommand=print,dev.threadpool.jmh.RecursiveShapesBench$OursFork::fib' \
  '-XX:CompileCommand=print,dev.threadpool.internal.scheduler.Joining::joinFork' \
  '-XX:CompileCommand=print,dev.threadpool.jmh.RecursiveShapesBench$OursFork$$Lambda*::*' \
  -cp "$cp" dev.threadpool.jmh.SplitCost "$side" "$shape" "$runs" > out.txt 2>&1
