#!/usr/bin/env bash
# Ctrl-C, SIGTERM and SIGKILL of hvdrun leave no worker behind.
. "$(dirname "$0")/lib.sh"

# start_job ARGS...: hvdrun in the background; its pid in $PID once every
# worker runs (each worker creates a file before sleeping).
start_job() {
    rm -f "$TMP"/up.*
    "$HVDRUN" "$@" >"$TMP/out" 2>"$TMP/err" &
    PID=$!
    local i
    for ((i = 0; i < 100; i++)); do
        [ "$(ls "$TMP" | grep -c '^up\.')" -ge 3 ] && return 0
        sleep 0.1
    done
    return 1
}

# wait_rc PID SECONDS: waits for hvdrun, sets $RC (124 when it hung).
wait_rc() {
    local i
    for ((i = 0; i < $2 * 10; i++)); do
        if ! kill -0 "$1" 2>/dev/null; then
            wait "$1"
            RC=$?
            return 0
        fi
        sleep 0.1
    done
    kill -KILL "$1"
    RC=124
}

W="touch $TMP/up.\$HOROVOD_RANK; exec -a sleep-$MARK sleep 300"
STUBBORN="touch $TMP/up.\$HOROVOD_RANK; trap '' TERM; (exec -a sleep-$MARK sleep 300); sleep 300"
CHILDREN="touch $TMP/up.\$HOROVOD_RANK; (exec -a sleep-$MARK sleep 300) & wait"

check "workers up" start_job -np 3 bash -c "$W"
kill -INT $PID
wait_rc $PID 15
check "SIGINT: exit 130" [ "$RC" -eq 130 ]
check "SIGINT: no worker left" wait_gone 3
check "SIGINT: says it is stopping" grep -q "Interrupt: stopping 3 workers" "$TMP/err"

check "workers up" start_job -np 3 bash -c "$W"
kill -TERM $PID
wait_rc $PID 15
check "SIGTERM: exit 143" [ "$RC" -eq 143 ]
check "SIGTERM: no worker left" wait_gone 3

# second Ctrl-C kills at once, even workers that ignore SIGTERM
# (the second only once hvdrun has taken the first: two pending SIGINTs
# merge into one in its signalfd)
check "stubborn workers up" start_job --kill-grace 60 -np 3 bash -c "$STUBBORN"
kill -INT $PID
check "first SIGINT taken: hvdrun says it is stopping" \
    within 10 grep -q "Interrupt: stopping 3 workers" "$TMP/err"
kill -INT $PID
wait_rc $PID 15
check "second SIGINT: exit 130 well before the 60 s grace" [ "$RC" -eq 130 ]
check "second SIGINT: says it kills" \
    grep -q "Interrupt again: killing every worker" "$TMP/err"
check "second SIGINT: no worker left" wait_gone 3

# SIGKILL of hvdrun: nothing can run in hvdrun; the guard stops them all
check "workers with children up" start_job -np 3 bash -c "$CHILDREN"
kill -KILL $PID
wait $PID 2>/dev/null
check "SIGKILL: workers and their children gone" wait_gone 5

check "stubborn workers up" start_job --kill-grace 1 -np 3 bash -c "$STUBBORN"
kill -KILL $PID
wait $PID 2>/dev/null
check "SIGKILL: TERM-ignoring workers killed after the grace" wait_gone 5
finish
