#!/usr/bin/env bash
# --max-restarts N (torchrun's): after a failure the whole job starts
# again, a new hvdd and every rank, up to N times; the workers see
# TORCHELASTIC_RESTART_COUNT and TORCHELASTIC_MAX_RESTARTS. A signal to
# hvdrun, a usage or host-file error, never restarts.
. "$(dirname "$0")/lib.sh"

# restarted_not: the job in $TMP/err did not start again
restarted_not() { ! grep -q 'starting it again' "$TMP/err"; }

# rank 1 fails at the first start (a moment after it began, so that rank
# 0 has said its line before the failure stops it); every start says what
# it was told
ONCE='echo "start $TORCHELASTIC_RESTART_COUNT of $TORCHELASTIC_MAX_RESTARTS"
if [ "$TORCHELASTIC_RESTART_COUNT" = 0 ] && [ $HOROVOD_RANK = 1 ]; then sleep 0.5; exit 3; fi'
hvd --max-restarts 2 -np 2 bash -c "$ONCE"
check "fails once, 2 restarts allowed: exit 0" [ "$RC" -eq 0 ]
check "fails once: one restart, said on one line" \
    [ "$(grep -c '^hvdrun: job failed (exit 3); starting it again (restart 1 of 2)$' "$TMP/err")" -eq 1 ]
check "fails once: both ranks started twice, counted 0 then 1" \
    [ "$(grep -c 'start 0 of 2$' "$TMP/out")" -eq 2 -a "$(grep -c 'start 1 of 2$' "$TMP/out")" -eq 2 ]

hvd --max-restarts 2 -np 2 bash -c 'exit 4'
check "always fails: exit 4 after the last restart" [ "$RC" -eq 4 ]
check "always fails: restarts 1 and 2" \
    [ "$(grep -c 'starting it again (restart [12] of 2)$' "$TMP/err")" -eq 2 ]
check "always fails: then the reason" \
    grep -q '^hvdrun: job failed (exit 4) after 2 restarts$' "$TMP/err"

hvd --max-restarts 0 -np 2 bash -c "$ONCE"
check "--max-restarts 0: the failure's code" [ "$RC" -eq 3 ]
check "--max-restarts 0: no restart" restarted_not
check "--max-restarts 0: the workers are told 0 of 0" grep -q 'start 0 of 0$' "$TMP/out"

hvd -np 2 bash -c "$ONCE"
check "without --max-restarts: no TORCHELASTIC_ variable (so nobody fails)" \
    [ "$RC" -eq 0 -a "$(grep -c '^\[[01]\]<stdout>:start  of $' "$TMP/out")" -eq 2 ]

# the next start begins only once the last one's processes are gone
LEFT="if [ \"\$TORCHELASTIC_RESTART_COUNT\" = 0 ]; then
  if [ \$HOROVOD_RANK = 0 ]; then (exec -a sleep-$MARK sleep 300) & sleep 300; fi
  sleep 0.5; exit 5; fi
pgrep -f ^sleep-$MARK >/dev/null && echo left || echo clean"
hvd --kill-grace 1 --max-restarts 1 -np 2 bash -c "$LEFT"
check "a start's children are gone before the next start" \
    [ "$RC" -eq 0 -a "$(grep -c 'clean$' "$TMP/out")" -eq 2 ]

# a real job on the second start: a new hvdd, new ring, every check
DIE="if [ \"\$TORCHELASTIC_RESTART_COUNT\" = 0 ] && [ \$HOROVOD_RANK = 2 ]; then exit 9; fi
exec $COLL_CHECK"
hvd --max-restarts 1 -np 3 bash -c "$DIE"
check "libcollective job, rank 2 fails at the first start: the second passes on every rank" \
    [ "$RC" -eq 0 -a "$(grep -c 'checks passed$' "$TMP/out")" -eq 3 ]

# what cannot be helped by starting again is not started again
hvd --max-restarts 3 -H 'bad host:2' true
check "a bad -H spec: usage error" [ "$RC" -eq 64 ]
check "a bad -H spec: no restart" restarted_not
hvd --max-restarts -1 -np 1 true
check "--max-restarts -1: usage error naming it" \
    [ "$RC" -eq 64 -a "$(grep -c 'max-restarts' "$TMP/err")" -ge 1 ]

# Ctrl-C in the middle of a start stops the job; it does not start again
rm -f "$TMP"/up.*
UP="touch $TMP/up.\$HOROVOD_RANK.\$TORCHELASTIC_RESTART_COUNT; exec -a sleep-$MARK sleep 300"
"$HVDRUN" --max-restarts 3 -np 2 bash -c "$UP" >"$TMP/out" 2>"$TMP/err" &
PID=$!
check "SIGINT: both ranks up" within 10 [ -e "$TMP/up.0.0" -a -e "$TMP/up.1.0" ]
kill -INT $PID
check "SIGINT: hvdrun ends" within 15 eval "! kill -0 $PID 2>/dev/null"
wait $PID
RC=$?
check "SIGINT: exit 130" [ "$RC" -eq 130 ]
check "SIGINT: no restart, no second start" \
    [ "$(ls "$TMP" | grep -c '^up\.')" -eq 2 ]
check "SIGINT: no restart said" restarted_not
check "SIGINT: no worker left" wait_gone 3
# an elastic job on this host alone (--min-np) runs an agent here, which
# hvdd took for a host joining a loopback job (HTTP 409, exit 69)
hvd --min-np 1 -np 2 sh -c 'echo "up $HOROVOD_RANK on $HOROVOD_GLOO_IFACE"'
check "elastic job on this host alone: exit 0" [ "$RC" -eq 0 ]
check "elastic job on this host alone: both ranks on loopback" \
    [ "$(grep -c 'up [01] on lo$' "$TMP/out")" -eq 2 ]
finish
