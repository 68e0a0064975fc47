#!/usr/bin/env bash
# 4096 simulated workers register with a standalone hvdd, each PUTs a key
# and reads its neighbour's back, and all pass a barrier: nothing lost.
. "$(dirname "$0")/lib.sh"
HVDD=${HVDD:?set HVDD to the hvdd binary}
LOAD=${HVDD_LOAD:?set HVDD_LOAD to the hvdd_load client}
N=${LOAD_CLIENTS:-4096}

"$HVDD" --foreground --listen 127.0.0.1:0 --size "$N" \
    --token-file "$TMP/token" >"$TMP/hvdd.out" 2>"$TMP/hvdd.err" &
HVDD_PID=$!
trap 'kill $HVDD_PID 2>/dev/null; cleanup' EXIT
for ((i = 0; i < 50; i++)); do
    grep -q '^listening' "$TMP/hvdd.out" && break
    sleep 0.1
done
PORT=$(awk '/^listening/ {print $2}' "$TMP/hvdd.out")
HVDD_TOKEN=$(cat "$TMP/token") timeout 120 "$LOAD" "$PORT" "$N" >"$TMP/load" 2>&1
rc=$?
cat "$TMP/load"
check "$N clients: every value read back equal, barrier passed" \
    grep -q "^$N clients: .* all $N values read back equal" "$TMP/load"
check "load client exit 0" [ $rc -eq 0 ]
check "hvdd still alive" kill -0 $HVDD_PID
finish
