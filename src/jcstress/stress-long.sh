#!/usr/bin/env bash
# The long counting-stress run recorded in docs/TESTING.md: every subject, many runs, C2 / C1-only / -Xint.
#   src/jcstress/stress-long.sh [runs] [items]
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=${1:-20}
items=${2:-2000000}
mvn -B -q -DskipTests test-compile
mvn -B -q validate exec:exec@stress -Dstress.runs="$runs" -Dstress.items="$items"
