#!/usr/bin/env bash
# Every option that hvdrun --help lists is documented in hvdrun.1, hvdd's
# --help and hvdd.8 list the same options, and the man pages render
# without warnings.
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
# hvdd: the options that --help lists are those that hvdd.8 describes, the
# tag lines (after .TP) of its OPTIONS section, both ways, so that neither
# can gain or lose one alone.
HVDD=${HVDD:?set HVDD to the hvdd binary}
"$HVDD" --help >"$TMP/hvdd.help"
check "hvdd --help exits 0" [ $? -eq 0 ]
grep -oE '^  (-[a-zA-Z], )?--?[a-z][a-z-]*' "$TMP/hvdd.help" |
    grep -oE -- '--?[a-z][a-z-]*' | sort -u >"$TMP/hvdd.help.opts"
sed -n '/^\.SH OPTIONS/,/^\.SH /p' "$MANDIR/hvdd.8" | sed -n '/^\.TP/{n;p;}' |
    sed 's/\\-/-/g' | grep -oE -- '(^|[ "])--?[a-z][a-z-]*' |
    grep -oE -- '--?[a-z][a-z-]*' | sort -u >"$TMP/hvdd.man.opts"
check "hvdd --help lists options" [ "$(wc -l <"$TMP/hvdd.help.opts")" -gt 10 ]
for o in $(cat "$TMP/hvdd.help.opts"); do
    check "hvdd.8 documents $o" grep -qxF -- "$o" "$TMP/hvdd.man.opts"
done
for o in $(cat "$TMP/hvdd.man.opts"); do
    check "hvdd --help lists $o, which hvdd.8 documents" grep -qxF -- "$o" "$TMP/hvdd.help.opts"
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
