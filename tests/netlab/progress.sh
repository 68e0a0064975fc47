#!/usr/bin/env bash
# The start's progress line on 8 namespaced hosts: on a terminal
# (script(1) gives hvdrun one) one line that counts the hosts whose agent
# runs and those that failed, updated in place and erased once the job
# runs; nothing of it when stderr is not a terminal. Needs root.
. "$(dirname "$0")/../integration/lib.sh"
export LAB_UP_HOSTS=8
. "$(dirname "$0")/lab.sh"
command -v script >/dev/null || { echo "skip: no script(1) (bsdutils)"; exit 77; }
H=$(for a in "${ADDR[@]}"; do printf '%s:1,' "$a"; done)
H=${H%,}
ESC=$(printf '\033')
CR=$(printf '\r')

# on_tty COMMAND...: runs it with a terminal as stdin, stdout and stderr;
# what the terminal showed in $TMP/tty
on_tty() {
    local cmd="" w
    for w in "$@"; do cmd+=" $(printf '%q' "$w")"; done
    timeout -k 5 60 script -qfec "$cmd" "$TMP/tty" >/dev/null 2>&1 </dev/null
    RC=$?
}
# the texts the line showed, one per update
updates() { tr '\r' '\n' <"$TMP/tty" | sed "s/${ESC}\[K//g" | grep '^hvdrun: connecting '; }

on_tty "$HVDRUN" -H "$H" true
check "on a terminal: the job runs (exit 0)" [ "$RC" -eq 0 ]
check "on a terminal: it starts from none of 8 ready" \
    [ "$(updates | head -n 1)" = "hvdrun: connecting 0/8 hosts" ]
counts_rise() {
    [ "$(updates | wc -l)" -ge 2 ] &&
        updates | sed 's/.*connecting \([0-9]*\)\/.*/\1/' | sort -c -n
}
check "on a terminal: it is updated, and its counts only rise" counts_rise
# each update starts at the line's start and clears its rest: no newline
# between updates, and the last is erased (once all are ready, the job runs)
in_place() {
    ! tr -d '\r' <"$TMP/tty" | grep -aq "hosts${ESC}\[K\$" &&
        tr -d '\n' <"$TMP/tty" | grep -aq "hosts${ESC}\[K${CR}${ESC}\[K"
}
check "on a terminal: in place, erased when the job starts" in_place

hvd -H "$H" true
no_line() { [ "$RC" -eq 0 ] && ! grep -q "connecting" "$TMP/err"; }
check "not a terminal: the job runs, no progress line" no_line

# a host whose sshd is gone: counted as failed, the job does not start
kill "$(cat "$LABDIR/sshd8.pid")"
on_tty "$HVDRUN" -H "$H" true
check "a dead sshd: exit 69" [ "$RC" -eq 69 ]
failed_shown() { updates | grep -q '(1 failed)$'; }
check "a dead sshd: the line says 1 failed" failed_shown
check "a dead sshd: the host named after the line" \
    grep -aq "hvdrun: ${ADDR[7]}: connect: " "$TMP/tty"
check "nothing left on any host" lab_clean_within 10
finish
