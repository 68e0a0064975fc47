#!/usr/bin/env bash
# Elastic rounds between a real hvdd and real libcollective workers, the
# test standing in for the launcher: workers of hosts a, b and c (names
# hvdd knows; all on this machine) allreduce in a loop; c's is SIGKILLed
# and round 1 goes on with a and b, which keep their ranks and reset in
# place; then c comes back as a new worker (started for round 1, when
# round 2 runs already) and round 2 has all three again; then round 3 leaves b out, and b is told so.
. "$(dirname "$0")/lib.sh"
CHECK=${ELASTIC_CHECK:?set ELASTIC_CHECK to the elastic_check program}

. "$(dirname "$0")/elastic_lib.sh"
command -v curl >/dev/null || { echo "skip: curl not installed"; exit 77; }

elastic_hvdd a:1,b:1,c:1
# said N PATTERN: N lines of the workers' output match
said() { [ "$(cat "$TMP"/w.* | grep -c "$2")" -eq "$1" ]; }
# said_by HOST N PATTERN: likewise, of the worker started first on HOST
said_by() { [ "$(grep -c "$3" "$TMP/w.$1.0")" -eq "$2" ]; }

worker a 0 3 0 "$CHECK" 2 "$MARK"
worker b 1 3 0 "$CHECK" 3 "$MARK"
worker c 2 3 0 "$CHECK" 2 "$MARK"
check "round 0: 3 ranks right" within 20 said 3 'of 3 in round 0 (fresh 0): right'

# c's host fails: a and b go on as ranks 0 and 1 of 2
kill -KILL "$W_c"
wait "$W_c" 2>/dev/null
check "round 1 started by the launcher: 200" \
    [ "$(round a:1,b:1 "a:$W_a" "b:$W_b")" = 200 ]
check "round 1: hvdd gives a and b ranks 0 and 1" \
    grep -q "\"ranks\":\[{\"host\":\"a\",\"pid\":$W_a},{\"host\":\"b\",\"pid\":$W_b}\]" "$TMP/round"
check "round 1: both survivors saw round 0 end on the dead peer" \
    within 20 said 2 'round 0 ended: a peer failed or timed out'
check "round 1: a right as rank 0 of 2, not fresh (no new worker)" \
    within 20 said_by a 1 'rank 0 of 2 in round 1 (fresh 0): right'
check "round 1: b right as rank 1 of 2" \
    within 20 said_by b 1 'rank 1 of 2 in round 1 (fresh 0): right'

# c comes back: a new worker takes rank 2 of round 2; the others notice
# the new round (coll_round_changed) and reset
check "round 2 started: 200" [ "$(round a:1,b:1,c:1 "a:$W_a" "b:$W_b")" = 200 ]
check "round 2: rank 2 waits for a new worker (pid 0)" \
    grep -q '{"host":"c","pid":0}' "$TMP/round"
# (it joins as hvdrun starts a joining host's workers, but for round 1,
# as if round 2 had started while it started: it registers first and
# takes rank 2 of the round that runs)
worker c 1 2 1 env HOROVOD_ELASTIC_JOIN=1 "$CHECK" 2 "$MARK"
check "round 2: all three right, fresh (the new worker needs the state)" \
    within 20 said 3 'of 3 in round 2 (fresh 1): right'
wait "$W_a"
check "round 2: a (asked for round 2) exits 0" [ $? -eq 0 ]
wait "$W_c"
check "round 2: the new c exits 0" [ $? -eq 0 ]

# round 3 without b: b is told it is not in it, and exits 0
check "round 3 without b: 200" [ "$(round a:1)" = 200 ]
check "round 3: b is told it is not in it" \
    within 20 grep -q "removed: reset: /v1/rejoin: host 'b' pid $W_b is not in round 3" "$TMP/w.b.0"
wait "$W_b"
check "round 3: b exits 0" [ $? -eq 0 ]
check "a worker of round 0 is refused: its heartbeat names both rounds" \
    [ "$(curl -s -H "Authorization: Bearer $TOKEN" -X POST \
        --data '{"rank":0,"round":0}' "http://127.0.0.1:$PORT/v1/heartbeat")" = \
        "round 0 is over: the job is in round 3" ]
check "no worker left" wait_gone 5
for f in "$TMP"/w.*; do
    [ "$FAIL" -gt 0 ] && sed "s|^|  ${f##*/} |" "$f"
done
finish
