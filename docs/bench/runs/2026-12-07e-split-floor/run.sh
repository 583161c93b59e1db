#!/bin/bash
# SplitCost's sides, interleaved: 5 rounds, each side and shape one JVM a round (PERFORMANCE_TRACKING 86).
# Run from the repository root after `mvn -o -DskipTests test-compile dependency:build-classpath
# -Dmdep.outputFile=target/cp.txt -Dmdep.includeScope=test`, with a JDK 25 first on the PATH.
set -euo pipefail
CP=target/classes:target/test-classes:$(cat target/cp.txt)
for r in 1 2 3 4 5; do
  for sh in quadrature fib; do
    for side in SERIAL FLOOR_JOIN FLOOR_FORK FORK_JOIN WS_RING WS_RING_FORK; do
      echo -n "round $r: "
      timeout 300 java --enable-native-access=ALL-UNNAMED -Xms1g -Xmx1g -cp "$CP" dev.threadpool.jmh.SplitCost \
        "$side" "$sh" 30 2>&1 | grep "a split"
    done
  done
done
