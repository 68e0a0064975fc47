#!/usr/bin/env bash
# The Python binding and examples/train.py through hvdrun, with Debian's
# /usr/bin/python3 and numpy.
. "$(dirname "$0")/lib.sh"
SRC=${SRC:?set SRC to the source folder}
PY=/usr/bin/python3
if ! "$PY" -c 'import numpy' 2>/dev/null; then
    echo "skip: $PY has no numpy (apt-get install python3-numpy)"
    exit 77
fi
export COLLECTIVE_LIB=${COLLECTIVE_LIB:?set COLLECTIVE_LIB to libcollective.so}
export COLLECTIVE_PY=$SRC/libcollective/python
# An ASan build of libcollective in a plain python3: only the workers get
# the runtime preloaded.
X=()
if [ -n "${SANITIZE_PRELOAD:-}" ]; then
    X=(-x "LD_PRELOAD=$SANITIZE_PRELOAD" -x ASAN_OPTIONS=detect_leaks=0)
fi

for np in 1 3; do
    hvd "${X[@]}" -np $np "$PY" "$(dirname "$0")/python_check.py"
    check "binding on $np ranks" [ "$RC" -eq 0 -a "$(grep -c 'python binding ok' "$TMP/out")" -eq $np ]
done
for np in 1 4; do
    hvd "${X[@]}" -np $np -H localhost:$np "$PY" "$SRC/examples/train.py"
    check "train.py on $np ranks: exit 0" [ "$RC" -eq 0 ]
    check "train.py on $np ranks: loss fell, weights identical" \
        grep -q "^\[0\]<stdout>:loss .* on $np ranks, weights identical on every rank" "$TMP/out"
done
finish
