#!/usr/bin/env bash
# The `java` of every exec:exec execution in pom.xml: runs a JDK 25+ `java` with the arguments it is given.
#
# When the command has a lifecycle phase (`mvn -q -DskipTests package exec:exec@demo`), the toolchains plugin
# has selected JDK 25 and exec-maven-plugin passes its home in TOOLCHAIN_JAVA_HOME: that one is used. A command
# with only the exec goal (`mvn -q exec:exec@demo`) selects no toolchain, and a bare `java` would be the one on
# PATH (often Maven's own, 17 here, which rejects --sun-misc-unsafe-memory-access). The script then looks for a
# JDK 25+ itself, in this order, and takes the first:
#   $TOOLCHAIN_JAVA_HOME, $JAVA_HOME, `java` on PATH, /usr/lib/jvm/*, /Library/Java/JavaVirtualMachines/*
# With none, it fails and says what to do.
set -euo pipefail

readonly MIN_MAJOR=25

# The feature release of the JDK whose bin/java is $1, from its `release` file, else by asking it.
java_major() {
    local bin home v
    bin=$(readlink -f "$1" 2>/dev/null || echo "$1")
    home=$(dirname "$(dirname "$bin")")
    if [[ -f "$home/release" ]]; then
        v=$(sed -n 's/^JAVA_VERSION="\([^"]*\)".*/\1/p' "$home/release")
    else
        v=$("$1" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p')
    fi
    v=${v#1.} # 1.8 -> 8
    echo "${v%%[.+-]*}"
}

for c in "${TOOLCHAIN_JAVA_HOME:+$TOOLCHAIN_JAVA_HOME/bin/java}" "${JAVA_HOME:+$JAVA_HOME/bin/java}" \
        "$(command -v java || true)" /usr/lib/jvm/*/bin/java /Library/Java/JavaVirtualMachines/*/Contents/Home/bin/java; do
    [[ -n "$c" && -x "$c" ]] || continue
    v=$(java_major "$c")
    if [[ "$v" =~ ^[0-9]+$ ]] && (( v >= MIN_MAJOR )); then
        exec "$c" "$@"
    fi
done
echo "src/exec/java25.sh: no JDK $MIN_MAJOR+ found (looked at \$TOOLCHAIN_JAVA_HOME, \$JAVA_HOME, java on PATH," \
     "/usr/lib/jvm, /Library/Java/JavaVirtualMachines)." >&2
echo "Set JAVA_HOME to a JDK $MIN_MAJOR+ and run the command again, or put a phase in it so the toolchains" \
     "plugin selects one (see README), e.g. mvn -q validate exec:exec@demo" >&2
exit 1
