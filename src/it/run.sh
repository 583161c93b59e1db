#!/usr/bin/env bash
# The consumer test: installs the library, builds two tiny projects that depend on it by its coordinates
# (src/it/consumer: class path; src/it/consumer-module: module path, `requires dev.threadpool;`) and runs
# each with the README's launch line ("Use it in your project"). Fails on a non-zero exit, on a jnr jar that
# came along with the dependency (jnr-posix is optional), or on any JVM WARNING line (native access).
# Run from anywhere; `.ci/run` runs it after `mvn -B verify`. JAVA: a JDK 25+ java (default: the one
# src/exec/java25.sh finds, as the pom's exec goals do).
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
start=$SECONDS
JAVA=${JAVA:-$root/src/exec/java25.sh}
# the project's own version: the first <version> of pom.xml (it has no parent)
version=$(sed -n 's:^  <version>\(.*\)</version>.*:\1:p' pom.xml | head -1)
[[ -n "$version" ]] || { echo "src/it/run.sh: no version in pom.xml" >&2; exit 1; }

# 1. install the library (-DskipTests skips every test execution, the integration-test phase's included)
mvn -B -q -DskipTests install

# 2. build both consumers against the installed artifact
mvn -B -q -f src/it/pom.xml -Dthreadpool.version="$version" package

fail=0
run() { # name, directory to run in, then the java arguments after `java`
    local name=$1 dir=$2 out; shift 2
    echo "== $name (in $dir): java $*"
    if ! out=$(cd "$dir" && "$JAVA" "$@" 2>&1); then
        echo "$out"; echo "FAILED ($name): non-zero exit" >&2; fail=1; return 0
    fi
    echo "$out"
    if grep -q 'WARNING' <<<"$out"; then
        echo "FAILED ($name): the JVM printed a warning" >&2; fail=1
    fi
}

for d in consumer consumer-module; do
    if ls "src/it/$d/target" | grep -i 'jnr\|jffi\|asm'; then
        echo "FAILED ($d): jnr came with dev.threadpool:thread-pool (it should be optional)" >&2; fail=1
    fi
done

# The launch lines are read from the README ("Use it in your project"), so what it tells users is what runs
# here: each project's target/ holds app.jar and thread-pool-<version>.jar, the names the README uses.
readme_line() { # the README's line `java --enable-native-access=<$1> ...`
    local line
    line=$(grep -m1 "^java --enable-native-access=$1 " README.md) \
        || { echo "src/it/run.sh: no launch line 'java --enable-native-access=$1 ...' in README.md" >&2; exit 1; }
    [[ "$line" == *"thread-pool-$version.jar"* ]] \
        || { echo "src/it/run.sh: README's launch line names another version than $version: $line" >&2; exit 1; }
    echo "${line#java }"
}
read -r -a cp_args <<<"$(readme_line ALL-UNNAMED)"
read -r -a mp_args <<<"$(readme_line dev.threadpool)"
run "class path" src/it/consumer/target "${cp_args[@]}"
run "module path" src/it/consumer-module/target "${mp_args[@]}"

echo "src/it/run.sh: $((SECONDS - start)) s"
if (( fail )); then
    echo "src/it/run.sh: FAILED" >&2
    exit 1
fi
echo "src/it/run.sh: both consumers OK"
