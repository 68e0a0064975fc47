#!/usr/bin/env bash
# The Python binding and examples/train.py through hvdrun, with Debian's
# /usr/bin/python3 and numpy.
. "$(dirname "$0")/lib.sh"
python_binding numpy python3-numpy

for np in 1 3; do
    hvd "${PYX[@]}" -np $np "$PY" "$(dirname "$0")/python_check.py"
    check "binding on $np ranks" [ "$RC" -eq 0 -a "$(grep -c 'python binding ok' "$TMP/out")" -eq $np ]
done
for np in 1 4; do
    hvd "${PYX[@]}" -np $np -H localhost:$np "$PY" "$SRC/examples/train.py"
    check "train.py on $np ranks: exit 0" [ "$RC" -eq 0 ]
    check "train.py on $np ranks: loss fell, weights identical" \
        grep -q "^\[0\]<stdout>:loss .* on $np ranks, weights identical on every rank" "$TMP/out"
done
finish
