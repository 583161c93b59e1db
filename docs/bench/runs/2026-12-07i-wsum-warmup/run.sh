#!/usr/bin/env bash
# wsum's warm-up and steady state: one JMH fork per (round, pool), no warm-up iterations, 14 measured 1-s
# iterations, so each fork shows the protocol's seconds 3-5 and the seconds 12-14 of the same JVM.
set -euo pipefail
out=$1; seed=$2; rounds=${3:-5}
out=$(realpath -m "$out")
cd "$(dirname "$0")/../../../.."   # the checkout, built (target/cp.txt: the test class path)
CP=target/test-classes:target/classes:$(cat target/cp.txt)
JAVA=${JMH_JAVA:-java}   # a JDK 25+
mkdir -p "$out"
for r in $(seq 1 $rounds); do
  order=$(python3 -c "import random;r=random.Random($seed*100+$r);p=['GLOBAL_QUEUE','WS_RING','WS_CHASE_LEV','LANE_EXTENSION','FORK_JOIN'];r.shuffle(p);print(' '.join(p))")
  echo "$order" > "$out/order.r$r.txt"
  for p in $order; do
    $JAVA --enable-native-access=ALL-UNNAMED -cp "$CP" org.openjdk.jmh.Main '^dev\.threadpool\.jmh\.FanoutBench\.wsum$' \
      -f 1 -wi 0 -i 14 -r 1s -p pool=$p -rf json -rff "$out/wsum.r$r.$p.json" > "$out/wsum.r$r.$p.log" 2>&1
    echo "r$r $p done"
  done
done
