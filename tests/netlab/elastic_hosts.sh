#!/usr/bin/env bash
# Elastic hosts that come and go, on 4 namespaced hosts: the discovery
# script adds a host and the job grows at the workers' next check (never
# beyond --max-np); a host it drops leaves through a round without it (its
# workers exit 0); a drop below --min-np waits, and a host that arrives
# resumes the job (Horovod #3494 deadlocked there); with a fixed -H list
# a failed host is blacklisted, then comes back after its cooldown (not
# for ever: Horovod #1926), and a host that cannot start is blacklisted
# for longer each time; SIGINT while hosts change leaves nothing. Needs
# root.
. "$(dirname "$0")/../integration/lib.sh"
CHECK=${ELASTIC_CHECK:?set ELASTIC_CHECK to the elastic_check program}
LAB_UP_HOSTS=4
. "$(dirname "$0")/lab.sh"
A=${ADDR[0]} B=${ADDR[1]} C=${ADDR[2]} D=${ADDR[3]}
HOSTS=$WORK/hosts
DISCOVER=(--host-discovery-script "cat $HOSTS")

# grep -c PATTERN FILE, 0 when none
count() { grep -c "$1" "$2" || true; }
saw() { grep -q "$1" "$TMP/err"; }
saw_out() { grep -q "$1" "$TMP/out"; }
# start_bg ARGS...: hvdrun in the background, pid in $pid
start_bg() {
    : >"$TMP/out" # now: the background shell's own redirection may come
    : >"$TMP/err" # after the first look at the files
    "$HVDRUN" "$@" >"$TMP/out" 2>"$TMP/err" &
    pid=$!
}
job_over() { ! kill -0 "$pid" 2>/dev/null; }
end_bg() {
    within "${1:-60}" job_over || kill -KILL "$pid"
    wait "$pid"
    RC=$?
}
show_on_failure() {
    [ "$FAIL" -eq 0 ] || tail -n 12 "$TMP/err" "$TMP/out" | sed 's/^/  | /'
}

# --- the discovery adds a host: the job grows, to --max-np ---
FAIL0=$FAIL
printf '%s:2\n%s:2\n' "$A" "$B" >"$HOSTS"
start_bg "${DISCOVER[@]}" --min-np 2 --max-np 5 -np 4 "$CHECK" 1 "$MARK"
check "grow: 4 ranks run in round 0" within 30 saw_out 'of 4 in round 0'
printf '%s:2\n' "$C" >>"$HOSTS"
end_bg 90
check "grow: exit 0" [ "$RC" -eq 0 ]
check "grow: said on one line, with --max-np's cut" \
    grep -q "^hvdrun: $C joined; continuing with 5 ranks on $A,$B,$C\$" "$TMP/err"
check "grow: 5 ranks right in round 1" \
    [ "$(count 'of 5 in round 1 (fresh 1): right' "$TMP/out")" -eq 5 ]
check "grow: the new worker is rank 4, tagged so" \
    grep -q '^\[4\]<stdout>:rank 4 of 5 in round 1' "$TMP/out"
check "grow: nothing left on any host" lab_clean_within 10
[ "$FAIL" -eq "$FAIL0" ] || show_on_failure

# --- two hosts listed at once join in one round (a second round while
# --- the first one's new workers start would cut their ranks) ---
FAIL0=$FAIL
printf '%s:2\n%s:2\n' "$A" "$B" >"$HOSTS"
start_bg "${DISCOVER[@]}" --min-np 2 "$CHECK" 1 "$MARK"
check "two at once: 4 ranks run in round 0" within 30 saw_out 'of 4 in round 0'
printf '%s:2\n%s:2\n' "$C" "$D" >>"$HOSTS"
end_bg 90
check "two at once: exit 0" [ "$RC" -eq 0 ]
check "two at once: one round for both" \
    grep -q "^hvdrun: $C,$D joined; continuing with 8 ranks on $A,$B,$C,$D\$" "$TMP/err"
check "two at once: 8 ranks right in round 1" \
    [ "$(count 'of 8 in round 1 (fresh 1): right' "$TMP/out")" -eq 8 ]
check "two at once: nothing left on any host" lab_clean_within 10
[ "$FAIL" -eq "$FAIL0" ] || show_on_failure

# --- the discovery drops a running host: a round without it ---
FAIL0=$FAIL
printf '%s:2\n%s:2\n%s:2\n' "$A" "$B" "$C" >"$HOSTS"
start_bg "${DISCOVER[@]}" --min-np 2 "$CHECK" 1 "$MARK"
check "drop: 6 ranks run in round 0" within 30 saw_out 'of 6 in round 0'
printf '%s:2\n%s:2\n' "$A" "$B" >"$HOSTS"
end_bg 90
check "drop: exit 0" [ "$RC" -eq 0 ]
check "drop: said on one line" \
    grep -q "^hvdrun: host $C is no longer discovered; continuing with 4 ranks on $A,$B\$" "$TMP/err"
check "drop: 4 ranks right in round 1" \
    [ "$(count 'of 4 in round 1' "$TMP/out")" -eq 4 ]
check "drop: both of its workers were told they are out" \
    [ "$(count 'removed:' "$TMP/out")" -eq 2 ]
check "drop: nothing left on any host" lab_clean_within 10
[ "$FAIL" -eq "$FAIL0" ] || show_on_failure

# --- a drop below --min-np waits; a host that arrives resumes it ---
FAIL0=$FAIL
printf '%s:2\n%s:2\n' "$A" "$B" >"$HOSTS"
start_bg "${DISCOVER[@]}" --min-np 4 --elastic-timeout 60 "$CHECK" 1 "$MARK"
check "below --min-np: 4 ranks run in round 0" within 30 saw_out 'of 4 in round 0'
printf '%s:2\n' "$A" >"$HOSTS"
check "below --min-np: it waits" within 20 saw \
    "host $B is no longer discovered; 2 ranks left on $A, fewer than --min-np 4: waiting"
printf '%s:2\n%s:2\n' "$A" "$C" >"$HOSTS"
end_bg 90
check "below --min-np: exit 0 once a host came" [ "$RC" -eq 0 ]
check "below --min-np: the new host resumed it" \
    grep -q "^hvdrun: $C joined; continuing with 4 ranks on $A,$C\$" "$TMP/err"
check "below --min-np: 4 ranks right in round 1, none stuck in a sync" \
    [ "$(count 'of 4 in round 1' "$TMP/out")" -eq 4 ]
check "below --min-np: nothing left on any host" lab_clean_within 10
[ "$FAIL" -eq "$FAIL0" ] || show_on_failure

# --- -H: a failed host is blacklisted, then comes back after its cooldown ---
FAIL0=$FAIL
hvd --min-np 2 --blacklist-cooldown-range 1 2 -H "$A:2,$B:2,$C:2" \
    -x ELASTIC_CHECK_DIE_HOST="$B" -x ELASTIC_CHECK_DIE_STEP=20 "$CHECK" 2 "$MARK"
check "cooldown: exit 0" [ "$RC" -eq 0 ]
check "cooldown: the host failed, the job went on" \
    grep -q "^hvdrun: host $B failed (rank 2 exit 3); continuing with 4 ranks on $A,$C\$" "$TMP/err"
check "cooldown: blacklisted within the range" \
    grep -q "^hvdrun: host $B blacklisted for [12]\.[0-9] s (failure 1)\$" "$TMP/err"
check "cooldown: back after it, after the others in rank order" \
    grep -q "^hvdrun: $B joined; continuing with 6 ranks on $A,$C,$B\$" "$TMP/err"
check "cooldown: 6 ranks right in round 2" \
    [ "$(count 'of 6 in round 2' "$TMP/out")" -eq 6 ]
check "cooldown: nothing left on any host" lab_clean_within 10
[ "$FAIL" -eq "$FAIL0" ] || show_on_failure

# --- --max-restarts in an elastic job: below --min-np after a failure,
# --- the whole job starts again, once ---
FAIL0=$FAIL
hvd --min-np 6 --elastic-timeout 1 --max-restarts 1 -H "$A:2,$B:2,$C:2" \
    -x ELASTIC_CHECK_DIE_HOST="$B" -x ELASTIC_CHECK_DIE_STEP=5 "$CHECK" 1 "$MARK"
check "restarts: exit 0 after one restart" [ "$RC" -eq 0 ]
check "restarts: the first start gave up below --min-np" \
    grep -q "fewer than --min-np 6 ranks for 1 s (--elastic-timeout)" "$TMP/err"
check "restarts: started again, with the failed rank's code" \
    grep -q "^hvdrun: job failed (exit 3); starting it again (restart 1 of 1)\$" "$TMP/err"
check "restarts: 6 ranks right at each start" \
    [ "$(count 'of 6 in round 0' "$TMP/out")" -eq 12 ]
check "restarts: nothing left on any host" lab_clean_within 10
[ "$FAIL" -eq "$FAIL0" ] || show_on_failure

# --- SIGKILL of hvdrun while a host joins: nothing left anywhere (its
# --- children, hvdd and the discovery's run, go too) ---
FAIL0=$FAIL
printf '%s:2\n%s:2\n' "$A" "$B" >"$HOSTS"
start_bg --host-discovery-script "sleep 0.2; cat $HOSTS # $MARK" --verbose \
    --min-np 2 "$CHECK" 9 "$MARK"
check "SIGKILL mid-join: 4 ranks run" within 30 saw_out 'of 4 in round 0'
kids=$(pgrep -P "$pid" | tr '\n' ' ')
printf '%s:2\n' "$C" >>"$HOSTS"
check "SIGKILL mid-join: host 3 is joining" within 20 saw "$C: starting its agent to join the job"
kill -KILL "$pid"
wait "$pid" 2>/dev/null
kids_gone() {
    local k
    for k in $kids; do kill -0 "$k" 2>/dev/null && return 1; done
    return 0
}
check "SIGKILL mid-join: hvdrun's children are gone ($kids)" within 15 kids_gone
check "SIGKILL mid-join: no discovery run or worker left" wait_gone 15
check "SIGKILL mid-join: nothing left on any host" lab_clean_within 15
[ "$FAIL" -eq "$FAIL0" ] || show_on_failure

# --- the elastic digits example grows: the discovery adds host 3 at
# --- epoch 3, the job goes on with 6 ranks from its next commit ---
PY=/usr/bin/python3
if "$PY" -c 'import torch, sklearn' 2>/dev/null; then
    FAIL0=$FAIL
    SRC=${SRC:?set SRC to the source folder}
    export COLLECTIVE_LIB=${COLLECTIVE_LIB:?set COLLECTIVE_LIB}
    PYX=() # an ASan libcollective in a plain python3: its runtimes first
    [ -n "${SANITIZE_PRELOAD:-}" ] &&
        PYX=(-x "LD_PRELOAD=$SANITIZE_PRELOAD" -x ASAN_OPTIONS=detect_leaks=0)
    printf '%s:2\n%s:2\n' "$A" "$B" >"$HOSTS"
    start_bg "${DISCOVER[@]}" --min-np 2 "${PYX[@]}" "$PY" \
        "$SRC/examples/pytorch_digits_elastic.py" --epochs 30
    check "digits grow: epoch 3 on 4 ranks" within 120 saw_out 'epoch  3/30: .* on 4 ranks'
    printf '%s:2\n' "$C" >>"$HOSTS"
    end_bg 240
    check "digits grow: exit 0 (the accuracy reached)" [ "$RC" -eq 0 ]
    check "digits grow: host 3 joined" \
        grep -q "^hvdrun: $C joined; continuing with 6 ranks on $A,$B,$C\$" "$TMP/err"
    check "digits grow: rank 0 said the change (round 1, 6 ranks)" \
        grep -q '<stdout>:now 6 ranks (round 1), from epoch [0-9]* sample [0-9]*$' "$TMP/out"
    check "digits grow: it ended on 6 ranks" grep -q 'ending on 6 ranks' "$TMP/out"
    grep 'now [0-9] ranks\|test accuracy .* ending' "$TMP/out" | sed 's/^/  /'
    check "digits grow: nothing left on any host" lab_clean_within 10
    [ "$FAIL" -eq "$FAIL0" ] || show_on_failure
else
    echo "skip: the digits example needs python3-torch and python3-sklearn"
fi

# --- a host that cannot start is tried again, each cooldown longer; SIGINT
# --- while it is being tried leaves nothing ---
FAIL0=$FAIL
kill "$(cat "$LABDIR/sshd4.pid")" # host D's sshd is gone
printf '%s:2\n%s:2\n%s:1\n' "$A" "$B" "$D" >"$HOSTS"
start_bg "${DISCOVER[@]}" --min-np 2 -np 4 --blacklist-cooldown-range 1 3 \
    "$CHECK" 9 "$MARK"
check "dead host: tried, and named" within 30 saw "^hvdrun: host $D could not join: connect"
check "dead host: blacklisted again, for longer" within 30 saw \
    "^hvdrun: host $D blacklisted for [23]\.[0-9] s (failure 2)\$"
check "dead host: the job still runs" kill -0 "$pid"
kill -INT "$pid"
end_bg 30
check "dead host: SIGINT: exit 130" [ "$RC" -eq 130 ]
check "dead host: nothing left on any host" lab_clean_within 10
[ "$FAIL" -eq "$FAIL0" ] || show_on_failure
finish
