#!/usr/bin/env bash
# A stranger on the job's host against the job's TCP ring: one that claims
# a rank, one that opens connections and says nothing, and a relay put
# between two ranks through hvdd's store that flips bits. The job must
# finish right, or fail with an error; it never returns wrong values.
# Rank 1 starts late, so that the stranger reaches rank 0's listener
# first; every stranger is bounded in time and stopped by pid.
. "$(dirname "$0")/lib.sh"
CHECK=${COLL_CHECK:?set COLL_CHECK to the coll_check program}
INTRUDER="/usr/bin/python3 $(dirname "$0")/intruder.py"
command -v ss >/dev/null || { echo "skip: ss (iproute2) is missing"; exit 77; }
# ranks of one host share memory (shm.sh checks that a stranger cannot
# open it); here they take the TCP ring, as ranks on different hosts do
export COLL_SHM=0

# start_late DELAY ARGS...: hvdrun with 2 ranks of coll_check stream in the
# background (pid in $JOB), rank 1 DELAY seconds late; each rank's pid in
# $TMP/pid.RANK.
start_late() {
    local delay=$1
    shift
    rm -f "$TMP"/pid.*
    timeout -k 5 60 "$HVDRUN" "$@" -np 2 bash -c \
        'echo $$ >"$0/pid.$HOROVOD_RANK"; [ "$HOROVOD_RANK" = 1 ] && sleep "$1"; exec "$2" stream "$3"' \
        "$TMP" "$delay" "$CHECK" "$MARK" >"$TMP/out" 2>"$TMP/err" &
    JOB=$!
    START=$(date +%s%N)
}

# end_job: waits for the job; RC and TOOK (ms).
end_job() {
    wait "$JOB"
    RC=$?
    TOOK=$((($(date +%s%N) - START) / 1000000))
}

# rank 0's listening "ADDRESS PORT" in $LISTENER, once it listens
rank0_listens() {
    local pid
    [ -s "$TMP/pid.0" ] || return 1
    pid=$(cat "$TMP/pid.0")
    LISTENER=$(ss -Hltnp 2>/dev/null | awk -v p="pid=$pid," 'index($0, p) {print $4; exit}')
    [ -n "$LISTENER" ] && LISTENER="${LISTENER%:*} ${LISTENER##*:}"
    [ -n "$LISTENER" ]
}

# one of rank 0's variables
rank0_env() { tr '\0' '\n' <"/proc/$(cat "$TMP/pid.0")/environ" | sed -n "s/^$1=//p"; }

stop() { [ -n "${1:-}" ] && kill "$1" 2>/dev/null; wait "$1" 2>/dev/null; }

# --- a stranger claims to be rank 1 before rank 1 connects ---
start_late 2
check "impostor: rank 0 listens" within 10 rank0_listens
$INTRUDER impostor $LISTENER 1 0 8 >"$TMP/intruder" 2>&1 &
STRANGER=$!
end_job
stop "$STRANGER"
check "impostor: the stranger reached rank 0" grep -q 'connected as rank 1' "$TMP/intruder"
check "impostor: the job is not broken (exit $RC)" [ "$RC" -eq 0 ]
check "impostor: both ranks' results right" \
    [ "$(grep -c 'checks passed$' "$TMP/out")" -eq 2 ]
[ "$RC" -eq 0 ] || sed 's/^/  | /' "$TMP/err" | head -10

# --- connections that say nothing cost nothing: the ring connects in its
# --- normal time, not after the 10 s timeout ---
start_late 2 -x HOROVOD_GLOO_TIMEOUT_SECONDS=10
check "silent: rank 0 listens" within 10 rank0_listens
$INTRUDER silent $LISTENER 5 12 >"$TMP/intruder" 2>&1 &
STRANGER=$!
end_job
stop "$STRANGER"
check "silent: the connections were open" grep -q '5 connections open' "$TMP/intruder"
check "silent: the job finished right (exit $RC)" \
    [ "$RC" -eq 0 -a "$(grep -c 'checks passed$' "$TMP/out")" -eq 2 ]
check "silent: well within the timeout ($TOOK ms)" [ "$TOOK" -lt 8000 ]

# --- a relay between rank 1 and rank 0 that flips bits: rank 1 is sent to
# --- it through the store (with the job's token, as if the store were
# --- open); the job must fail, never return wrong values ---
start_late 3
check "relay: rank 0 listens" within 10 rank0_listens
TOKEN=$(rank0_env HVDD_TOKEN)
RDV="http://$(rank0_env HOROVOD_GLOO_RENDEZVOUS_ADDR):$(rank0_env HOROVOD_GLOO_RENDEZVOUS_PORT)"
$INTRUDER relay "$TMP/relay.addr" $LISTENER 20 >"$TMP/intruder" 2>&1 &
STRANGER=$!
check "relay: listening" within 5 test -s "$TMP/relay.addr"
# the relay's address with rank 0's own nonce: the strongest lie
put_relay() {
    local nonce
    nonce=$(curl -s -H "Authorization: Bearer $TOKEN" "$RDV/ring/comm0-0" | awk '{print $3}')
    printf '%s %s' "$(cat "$TMP/relay.addr")" "$nonce" >"$TMP/relay.value"
    curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $TOKEN" \
        -X PUT --data-binary "@$TMP/relay.value" "$RDV/ring/comm0-0"
}
check "relay: rank 0's address replaced in the store" [ "$(put_relay)" = 200 ]
end_job
stop "$STRANGER"
check "relay: no rank got a wrong value" sh -c "! grep -q 'want' '$TMP/err'"
check "relay: the job failed (exit $RC)" [ "$RC" -ne 0 ]
# (rank 0 refuses the relayed hello, proven for another address, and
# closes it; or rank 1 refuses an answer from a stranger)
check "relay: the relayed stream was refused" \
    grep -Eq 'rank 0 \(127.0.0.1:[0-9]*\): (failed the handshake|closed the connection in the handshake)' "$TMP/err"
grep -q want "$TMP/err" && grep want "$TMP/err" | head -3 | sed 's/^/  | /'
finish
