# Sourced by run-benchmarks.sh and ab.sh: sets JAVA to the first JDK 25+ found in $JMH_JAVA, $JAVA_HOME, on
# PATH or under /usr/lib/jvm, or exits with a message saying what to set.
java_major() { "$1" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p'; }
find_java() {
    local c
    for c in "${JMH_JAVA:-}" "${JAVA_HOME:+$JAVA_HOME/bin/java}" "$(command -v java || true)" /usr/lib/jvm/*/bin/java; do
        [[ -n "$c" && -x "$c" ]] || continue
        local v; v=$(java_major "$c")
        if [[ -n "$v" && "$v" -ge 25 ]]; then echo "$c"; return 0; fi
    done
    return 1
}
JAVA=$(find_java) || { echo "no JDK 25+ found: set JMH_JAVA to its bin/java" >&2; exit 1; }
