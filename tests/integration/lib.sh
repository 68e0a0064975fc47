# Shared helpers for the integration tests: each test script sources this,
# runs the real hvdrun, and ends with `finish`.
set -u
HVDRUN=${HVDRUN:?set HVDRUN to the hvdrun binary}
PASS=0
FAIL=0
TMP=$(mktemp -d)
# A marker that only this script's workers carry, to find leftovers.
MARK="hvdtest$$x$RANDOM"

cleanup() {
    pkill -KILL -f "$MARK" 2>/dev/null
    rm -rf "$TMP"
}
trap cleanup EXIT

ok() { echo "ok - $*"; PASS=$((PASS + 1)); }
bad() { echo "not ok - $*"; FAIL=$((FAIL + 1)); }

# check DESCRIPTION COMMAND...: passes when COMMAND succeeds.
check() {
    local desc=$1
    shift
    if "$@"; then ok "$desc"; else bad "$desc"; fi
}

# hvd ARGS...: runs hvdrun with a time bound (HVD_LIMIT seconds, default
# 60: a bound on a hang, not a speed target); output in $TMP/out,
# $TMP/err, status in $RC (124: the bound was hit).
hvd() {
    timeout -k 5 "${HVD_LIMIT:-60}" "$HVDRUN" "$@" >"$TMP/out" 2>"$TMP/err"
    RC=$?
}

# timed_hvd ARGS...: hvd, with its wall time in $TOOK (ms).
timed_hvd() {
    local start
    start=$(date +%s%N)
    hvd "$@"
    TOOK=$((($(date +%s%N) - start) / 1000000))
}

# Number of live processes whose command line has the marker.
leftovers() { pgrep -f "$MARK" | wc -l; }

# within SECONDS COMMAND...: runs COMMAND every 0.1 s until it succeeds
# (0) or SECONDS (a whole number) have passed (1).
within() {
    local secs=$1 i end=$((SECONDS + $1 + 1))
    shift
    # bounded in count and in time: a check that itself blocks (a client
    # of a daemon that is not there) must not stretch the wait
    for ((i = 0; i < secs * 10 && SECONDS < end; i++)); do
        "$@" && return 0
        sleep 0.1
    done
    return 1
}

no_leftovers() { [ "$(leftovers)" -eq 0 ]; }

# wait_gone SECONDS: waits until no marked process is left.
wait_gone() { within "$1" no_leftovers; }

# start_hvdd ARGS...: a standalone hvdd on 127.0.0.1 with a token file
# $TMP/token; sets HVDD_PID and PORT, and stops it on exit.
start_hvdd() {
    "${HVDD:?set HVDD to the hvdd binary}" --foreground --listen 127.0.0.1:0 \
        --token-file "$TMP/token" "$@" >"$TMP/hvdd.out" 2>"$TMP/hvdd.err" &
    HVDD_PID=$!
    trap 'kill $HVDD_PID 2>/dev/null; cleanup' EXIT
    local i
    for ((i = 0; i < 50; i++)); do
        grep -q '^listening' "$TMP/hvdd.out" && break
        sleep 0.1
    done
    PORT=$(awk '/^listening/ {print $2}' "$TMP/hvdd.out")
}

# python_binding MODULE PACKAGE: Debian's /usr/bin/python3 in $PY, with
# this tree's binding (COLLECTIVE_LIB and COLLECTIVE_PY exported) and in
# PYX the hvdrun arguments that an ASan libcollective needs in a plain
# python3 (the runtimes preloaded in the workers only); skips the test
# (77) when $PY has no MODULE (apt-get install PACKAGE).
python_binding() {
    PY=/usr/bin/python3
    if ! "$PY" -c "import $1" 2>/dev/null; then
        echo "skip: $PY has no $1 (apt-get install $2)"
        exit 77
    fi
    export COLLECTIVE_LIB=${COLLECTIVE_LIB:?set COLLECTIVE_LIB to libcollective.so}
    export COLLECTIVE_PY=${SRC:?set SRC to the source folder}/libcollective/python
    PYX=()
    if [ -n "${SANITIZE_PRELOAD:-}" ]; then
        PYX=(-x "LD_PRELOAD=$SANITIZE_PRELOAD" -x ASAN_OPTIONS=detect_leaks=0)
    fi
}

finish() {
    echo "$PASS passed, $FAIL failed"
    [ "$FAIL" -eq 0 ]
}
