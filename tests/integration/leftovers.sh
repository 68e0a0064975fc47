#!/usr/bin/env bash
# What workers leave behind is stopped with the job: a process that
# setsid()s away and keeps the rank's output open cannot hold hvdrun past
# the grace (and is named), a daemon with its output elsewhere does not
# outlive the job, and hvdrun's own helpers are gone when it returns.
# Every leftover is checked by its pid.
. "$(dirname "$0")/lib.sh"

alive() { kill -0 "$1" 2>/dev/null; }
gone() { ! alive "$1"; }

# a child in a session of its own that holds the rank's stdout and stderr
timed_hvd --kill-grace 1 -np 1 sh -c \
    'setsid sh -c "sleep 118 & echo \$! >$0/held.pid"; echo started' "$TMP"
HELD=$(cat "$TMP/held.pid" 2>/dev/null)
check "held output: the rank's line came" grep -q '^\[0\]<stdout>:started$' "$TMP/out"
check "held output: hvdrun returned within the grace ($TOOK ms)" [ "$TOOK" -lt 6000 ]
check "held output: exit 0, the rank's" [ "$RC" -eq 0 ]
# (named before or after it execs sleep: "sh -c sleep 118 & ..." or "sleep 118")
check "held output: it says which rank left what" \
    grep -q "rank 0 exited, but pid $HELD (.*sleep 118.*) still holds its stdout" "$TMP/err"
check "held output: pid $HELD is gone" within 2 gone "$HELD"
alive "$HELD" && kill -KILL "$HELD"

# daemons on two ranks with their output detached (each rank waits until
# its daemon has written its pid)
timed_hvd --kill-grace 1 -np 2 sh -c \
    'f=$0/daemon.$HOROVOD_RANK
     setsid -f sh -c "echo \$\$ >$f.new; mv $f.new $f; exec sleep 117" </dev/null >/dev/null 2>&1
     for i in $(seq 500); do [ -s "$f" ] && break; sleep 0.01; done' "$TMP"
D0=$(cat "$TMP/daemon.0" 2>/dev/null)
D1=$(cat "$TMP/daemon.1" 2>/dev/null)
check "daemons: exit 0" [ "$RC" -eq 0 ]
check "daemons: rank 0's pid $D0 gone when hvdrun returns" gone "$D0"
check "daemons: rank 1's pid $D1 gone when hvdrun returns" gone "$D1"
# (named by its command line then: "sleep 117", or the shell about to
# become it, or setsid about to run that)
check "daemons: named, with the rank" \
    grep -q "stopping pid $D0 (.*), left running by rank 0" "$TMP/err"
for p in $D0 $D1; do alive "$p" && kill -KILL "$p"; done

# a daemon that ignores SIGTERM gets SIGKILL after the grace
timed_hvd --kill-grace 1 -np 1 sh -c \
    'f=$0/stubborn.pid
     setsid -f sh -c "trap \"\" TERM; echo \$\$ >$f.new; mv $f.new $f; sleep 116" </dev/null >/dev/null 2>&1
     for i in $(seq 500); do [ -s "$f" ] && break; sleep 0.01; done' "$TMP"
ST=$(cat "$TMP/stubborn.pid" 2>/dev/null)
check "stubborn daemon: gone when hvdrun returns" gone "$ST"
check "stubborn daemon: within the grace and a little ($TOOK ms)" [ "$TOOK" -lt 5000 ]
alive "$ST" && kill -KILL "$ST"

# hvdrun's own helpers (the guard, hvdd) have been reaped when it returns:
# nothing of hvdrun's comes to a subreaper above it, every time
ORPHANS="/usr/bin/python3 $(dirname "$0")/orphans.py"
left=0
for i in 1 2 3 4 5; do
    $ORPHANS "$HVDRUN" -np 2 true >"$TMP/orphans" 2>&1
    grep -q '^orphans: 0$' "$TMP/orphans" || left=$((left + 1))
done
check "nothing of hvdrun's left when it returns ($left of 5 runs)" [ "$left" -eq 0 ]
finish
