#!/usr/bin/env bash
# 4096 simulated workers register with a standalone hvdd, each PUTs a key
# and reads its neighbour's back, and all pass a barrier: nothing lost.
. "$(dirname "$0")/lib.sh"
HVDD=${HVDD:?set HVDD to the hvdd binary}
LOAD=${HVDD_LOAD:?set HVDD_LOAD to the hvdd_load client}
N=${LOAD_CLIENTS:-4096}

start_hvdd --size "$N"
HVDD_TOKEN=$(cat "$TMP/token") timeout 120 "$LOAD" "$PORT" "$N" >"$TMP/load" 2>&1
rc=$?
cat "$TMP/load"
check "$N clients: every value read back equal, barrier passed" \
    grep -q "^$N clients: .* all $N values read back equal" "$TMP/load"
check "load client exit 0" [ $rc -eq 0 ]
check "hvdd still alive" kill -0 $HVDD_PID
finish
