#!/usr/bin/env bash
# collective.torch (Horovod's PyTorch API) through hvdrun, with Debian's
# /usr/bin/python3 and python3-torch: every operation and dtype, the
# DistributedOptimizer against one process on the whole batch, the state
# broadcasts, join, examples/pytorch_digits.py, and a killed and a hung
# rank.
. "$(dirname "$0")/lib.sh"
python_binding torch python3-torch
HERE=$(dirname "$0")

for np in 1 3; do
    hvd "${PYX[@]}" -np $np "$PY" "$HERE/torch_check.py"
    check "every op and dtype on $np ranks" [ "$RC" -eq 0 -a "$(grep -c 'collective.torch ops ok' "$TMP/out")" -eq $np ]
    [ "$RC" -eq 0 ] || tail -n 20 "$TMP/out" "$TMP/err"
    hvd "${PYX[@]}" -np $np "$PY" "$HERE/torch_train_check.py"
    check "training helpers on $np ranks" [ "$RC" -eq 0 -a "$(grep -c 'collective.torch training ok' "$TMP/out")" -eq $np ]
    [ "$RC" -eq 0 ] || tail -n 20 "$TMP/out" "$TMP/err"
done
hvd "${PYX[@]}" -x COLL_TRANSPORT=gloo -np 3 "$PY" "$HERE/torch_train_check.py"
check "training helpers on 3 ranks over Gloo" [ "$RC" -eq 0 -a "$(grep -c 'collective.torch training ok' "$TMP/out")" -eq 3 ]

# (30 epochs: 7 s in a release build, 45-60 s with ASan on a slow day,
# which the default bound of 60 s cut off)
HVD_LIMIT=300 hvd "${PYX[@]}" -np 4 -H localhost:4 "$PY" "$SRC/examples/pytorch_digits.py"
check "pytorch_digits.py on 4 ranks reaches 97% (exit 0)" [ "$RC" -eq 0 ]
[ "$RC" -eq 0 ] || tail -n 5 "$TMP/out" "$TMP/err"
check "pytorch_digits.py: a line per epoch from rank 0 only" [ "$(grep -c '^\[0\]<stdout>:epoch ' "$TMP/out")" -eq 30 -a -z "$(grep '^\[[1-9]\]<stdout>:epoch' "$TMP/out")" ]
grep "test accuracy .* on 4 ranks" "$TMP/out"

hvd "${PYX[@]}" -np 4 "$PY" "$HERE/torch_fail_check.py" KILL "$MARK"
check "a rank killed by SIGKILL: hvdrun exits 137" [ "$RC" -eq 137 ]
check "every other rank raised HorovodInternalError" [ "$(grep -c 'raised HorovodInternalError' "$TMP/out")" -eq 3 ]
check "no rank trained on past it" [ -z "$(grep 'without an error' "$TMP/out")" ]
check "hvdrun names the killed rank" grep -q "rank 1 on localhost was killed by signal 9" "$TMP/err"
check "nothing left running" wait_gone 10

hvd "${PYX[@]}" -x HOROVOD_GLOO_TIMEOUT_SECONDS=5 -np 3 "$PY" "$HERE/torch_fail_check.py" STOP "$MARK"
check "a hung rank (SIGSTOP): the others raised HorovodInternalError" [ "$(grep -c 'raised HorovodInternalError' "$TMP/out")" -eq 2 ]
took=$(sed -n 's/.*raised HorovodInternalError after \([0-9]*\)\..*/\1/p' "$TMP/out" | sort -n | tail -1)
took=${took:-0}
check "a hung rank: they raised after the 5 s timeout, not before, within 30 s ($took s)" [ "$took" -ge 4 -a "$took" -lt 30 ]
check "a hung rank: hvdrun exits 1, the first survivor's code" [ "$RC" -eq 1 ]
check "a hung rank: nothing left running" wait_gone 10
finish
