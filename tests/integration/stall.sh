#!/usr/bin/env bash
# Horovod's stall check: ranks that queue different names (rank 0
# "zero.c", the others "lonely.a" and "lonely.b"). Rank 0's warning, in
# Horovod's words with a "R: [names]" line per missing rank, reaches
# hvdrun's stderr through hvdd (names rank 0 never queued come from the
# ranks that did); past HOROVOD_STALL_SHUTDOWN_TIME_SECONDS the job stops
# (70, one line naming the ranks); HOROVOD_STALL_CHECK_DISABLE=1: no
# warning, the requests fail at the timeout as before.
. "$(dirname "$0")/lib.sh"
python_binding numpy python3-numpy
W="$(dirname "$0")/stall_check.py"
WARN="hvdrun: One or more tensors were submitted to be reduced, gathered or broadcasted by subset of ranks and are waiting for remainder of ranks for more than 1 seconds. This may indicate that different ranks are trying to submit different tensors or that only subset of ranks is submitting tensors, which will cause deadlock. "

hvd "${PYX[@]}" -np 3 -x HOROVOD_STALL_CHECK_TIME_SECONDS=1 \
    -x HOROVOD_GLOO_TIMEOUT_SECONDS=4 "$PY" "$W"
check "warning: the job ends, its requests expired (exit 0)" [ "$RC" -eq 0 ]
check "warning: Horovod's words" grep -qxF "$WARN" "$TMP/err"
check "warning: then the missing ranks" grep -qx 'hvdrun: Missing ranks:' "$TMP/err"
check "warning: rank 0 lacks the others' names (it never queued them)" \
    grep -qx 'hvdrun: 0: \[lonely.a, lonely.b\]' "$TMP/err"
check "warning: ranks 1 and 2 lack rank 0's" \
    grep -qx 'hvdrun: [12]: \[zero.c\]' "$TMP/err"
check "warning: before the requests expired (after 4 s)" \
    [ "$(grep -c 'expired:' "$TMP/out")" -eq 5 ]
[ "$FAIL" -eq 0 ] || sed 's/^/  | /' "$TMP/err" | head -20

hvd "${PYX[@]}" -np 2 -x HOROVOD_STALL_CHECK_TIME_SECONDS=1 \
    -x HOROVOD_STALL_SHUTDOWN_TIME_SECONDS=2 -x HOROVOD_GLOO_TIMEOUT_SECONDS=4 \
    "$PY" "$W"
check "shutdown: exit 70 (stopped by hvdd)" [ "$RC" -eq 70 ]
check "shutdown: the stalled ranks marked" grep -qx 'hvdrun: 0!: \[lonely.a, lonely.b\]' "$TMP/err"
check "shutdown: Horovod's last line" \
    grep -qxF 'hvdrun: One or more rank (marked by "!") is stalled for longer than 2 seconds. Will shutdown.' "$TMP/err"
check "shutdown: one line saying why" \
    grep -qxF 'hvdrun: job stopped: stall check: ranks 0, 1 did not queue what the other ranks did for more than 2 s (HOROVOD_STALL_SHUTDOWN_TIME_SECONDS)' "$TMP/err"
check "shutdown: before any request expired" [ "$(grep -c 'expired:' "$TMP/out")" -eq 0 ]
check "shutdown: nothing left" wait_gone 10

# --- a healthy job whose rank 0 is always 30 ms behind, on one name:
# --- no warning, and never stopped (each step starts its own clock) ---
hvd "${PYX[@]}" -np 2 -x HOROVOD_STALL_CHECK_TIME_SECONDS=1 \
    -x HOROVOD_STALL_SHUTDOWN_TIME_SECONDS=2 -x HOROVOD_CYCLE_TIME=20 \
    "$PY" "$W" healthy
check "healthy: exit 0" [ "$RC" -eq 0 ]
no_warning() { ! grep -q 'One or more tensors' "$TMP/err"; }
check "healthy: no warning" no_warning

# --- a stall that starts 1.5 s into the job: warned at once past 1 s,
# --- before its requests expire at 4 s ---
hvd "${PYX[@]}" -np 2 -x HOROVOD_STALL_CHECK_TIME_SECONDS=1 \
    -x HOROVOD_GLOO_TIMEOUT_SECONDS=4 "$PY" "$W" late
check "late stall: the warning" grep -qx 'hvdrun: 0: \[lonely.a, lonely.b\]' "$TMP/err"
check "late stall: the requests expired after it" \
    [ "$(grep -c 'expired:' "$TMP/out")" -eq 3 ]

hvd "${PYX[@]}" -np 2 -x HOROVOD_STALL_CHECK_DISABLE=1 \
    -x HOROVOD_STALL_CHECK_TIME_SECONDS=1 -x HOROVOD_GLOO_TIMEOUT_SECONDS=2 \
    "$PY" "$W"
check "disabled: no warning" no_warning
check "disabled: the requests expire at the timeout" \
    [ "$(grep -c 'did not queue it within 2 s' "$TMP/out")" -eq 3 ]
finish
