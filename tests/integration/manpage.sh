#!/usr/bin/env bash
# Every option that --help lists is documented in hvdrun.1, and the man
# pages render without warnings.
. "$(dirname "$0")/lib.sh"
MANDIR=${MANDIR:?set MANDIR to the man/ folder}

"$HVDRUN" --help >"$TMP/help"
check "--help exits 0" [ $? -eq 0 ]
opts=$(grep -oE '^  (-[a-zA-Z]+, )?--?[a-z][a-z-]*' "$TMP/help" | grep -oE -- '--?[a-zA-Z][a-zA-Z-]*')
check "--help lists options" [ "$(echo "$opts" | wc -w)" -gt 20 ]
# groff writes a dash as "\-": compare with that spelling.
for o in $opts; do
    check "hvdrun.1 documents $o" grep -qF -- "$(printf '%s' "$o" | sed 's/-/\\-/g')" "$MANDIR/hvdrun.1"
done
# the same for hvdd and hvdd.8
HVDD=${HVDD:?set HVDD to the hvdd binary}
for o in $("$HVDD" --help | grep -oE -- '--?[a-z][a-z-]*' | sort -u); do
    check "hvdd.8 documents $o" grep -qF -- "$(printf '%s' "$o" | sed 's/-/\\-/g')" "$MANDIR/hvdd.8"
done
# every function of the public header is in collective.3
for f in $(grep -oE '^COLL_API [a-z_ *]+ ?\**(coll_[a-z0-9_]+)' "$MANDIR/../libcollective/include/collective.h" | grep -oE 'coll_[a-z0-9_]+$'); do
    check "collective.3 documents $f" grep -q "$f" "$MANDIR/collective.3"
done
"$HVDRUN" --version | grep -qE '^hvdrun [0-9]+\.[0-9]+\.[0-9]+$'
check "--version" [ $? -eq 0 ]
if command -v groff >/dev/null; then
    for page in hvdrun.1 hvdrun-hostfile.5 hvdd.8 collective.3; do
        w=$(groff -man -Tutf8 -ww -z "$MANDIR/$page" 2>&1)
        check "$page renders without warnings" [ -z "$w" ]
    done
else
    echo "skip: groff not installed, man pages not rendered"
fi
finish
