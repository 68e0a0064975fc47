#!/usr/bin/env bash
# Horovod's timeline (--timeline-filename, HOROVOD_TIMELINE) from a real
# job: named async requests and blocking calls on 2 and 3 ranks, checked
# event by event (timeline_verify.py) after python3 -m json.tool accepts
# the file; a job SIGKILLed mid-way still leaves valid JSON; no file
# without the option; a path that cannot be written fails the start,
# named.
. "$(dirname "$0")/lib.sh"
python_binding numpy python3-numpy
D=$(dirname "$0")
TL=$TMP/timeline.json

for np in 2 3; do
    rm -f "$TL"
    hvd "${PYX[@]}" -np $np --timeline-filename "$TL" --timeline-mark-cycles \
        "$PY" "$D/timeline_check.py"
    check "$np ranks: the job passes" [ "$RC" -eq 0 ]
    check "$np ranks: json.tool accepts the timeline" "$PY" -m json.tool "$TL" /dev/null
    "$PY" "$D/timeline_verify.py" "$TL" $np --cycles >"$TMP/verify" 2>&1
    check "$np ranks: every tensor's events in order" [ $? -eq 0 ]
    grep -q '^not ok' "$TMP/verify" && sed 's/^/  | /' "$TMP/verify"
done

rm -f "$TL"
hvd "${PYX[@]}" -np 2 --timeline-filename "$TL" "$PY" "$D/timeline_check.py"
"$PY" "$D/timeline_verify.py" "$TL" 2 >"$TMP/verify" 2>&1
check "without --timeline-mark-cycles: no marks, the rest the same" [ $? -eq 0 ]

# --- killed mid-way: still valid JSON, with the events so far ---
rm -f "$TL"
"$HVDRUN" "${PYX[@]}" -np 2 --timeline-filename "$TL" "$PY" \
    "$D/timeline_check.py" 100000 "$MARK" >"$TMP/out" 2>"$TMP/err" &
pid=$!
check "killed: the job runs" within 60 grep -q 'round 200' "$TMP/out"
kill -KILL $(pgrep -f "$MARK") 2>/dev/null
wait "$pid" 2>/dev/null
check "killed: the timeline is still valid JSON" "$PY" -m json.tool "$TL" /dev/null
many() { [ "$(grep -c '"name": "AL' "$TL")" -gt 100 ]; }
check "killed: it holds the requests so far" many
check "killed: nothing left" wait_gone 10

# --- off: nothing written; a bad path: the start fails, named ---
rm -f "$TL"
hvd "${PYX[@]}" -np 2 "$PY" "$D/timeline_check.py"
check "off: the job passes" [ "$RC" -eq 0 ]
check "off: no timeline file anywhere here" [ -z "$(find "$TMP" -name '*.json')" ]
hvd "${PYX[@]}" -np 2 --timeline-filename "$TMP/no/such/dir/t.json" "$PY" "$D/timeline_check.py"
check "bad path: the job fails" [ "$RC" -ne 0 ]
check "bad path: rank 0 names the file and why" \
    grep -q "HOROVOD_TIMELINE '$TMP/no/such/dir/t.json': No such file or directory" "$TMP/err" "$TMP/out"
finish
