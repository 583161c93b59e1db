#!/usr/bin/env bash
# Reproducible-build check: builds the jars twice from clean (tests skipped, about 30 s each) and compares
# them byte for byte (sha256). Fails, naming the jars that differ, if any does.
# The fixed entry time is project.build.outputTimestamp in pom.xml; the main jar is normalized by the
# normalize-jar execution (maven-antrun-plugin), the sources and javadoc jars by their plugins.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for run in 1 2; do
    mvn -B -q clean
    mvn -B -q -DskipTests package
    mkdir -p "$out/$run"
    cp target/*.jar "$out/$run/"
done
status=0
for jar in "$out"/1/*.jar; do
    name=$(basename "$jar")
    a=$(sha256sum "$jar" | cut -d' ' -f1)
    if [ ! -f "$out/2/$name" ]; then
        echo "reproducible: $name built by the first run only" >&2; status=1; continue
    fi
    b=$(sha256sum "$out/2/$name" | cut -d' ' -f1)
    if [ "$a" != "$b" ]; then
        echo "reproducible: NOT REPRODUCIBLE: $name differs between two builds ($a vs $b)" >&2
        status=1
    else
        echo "reproducible: $name $a (identical in both builds)"
    fi
done
[ "$status" -eq 0 ] || { echo "reproducible: FAILED: see the jars above (pom.xml project.build.outputTimestamp, normalize-jar)" >&2; exit 1; }
echo "reproducible: OK"
