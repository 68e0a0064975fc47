#!/usr/bin/env bash
# The timeline renders: a real job's timeline (timeline_check.py on 2
# ranks) loaded in headless Chromium by libcollective/viewer/timeline.html.
# The rendered DOM says what was drawn (every tensor, every phase closed,
# none failed, the cycle marks); the screenshot holds the bars' colours in
# as many rows. A truncated file and an empty one render no bar and say
# so: the same checks fail on them. Skips without Debian's chromium.
. "$(dirname "$0")/lib.sh"
python_binding numpy python3-numpy
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
[ -x "$CHROMIUM" ] || { echo "skip: no $CHROMIUM (apt-get install chromium)"; exit 77; }
D=$(dirname "$0")
VIEW=$SRC/libcollective/viewer/timeline.html
TL=$TMP/timeline.json
# (as root, without a network: no sandbox, nothing fetched at start)
browse() {
    timeout 60 "$CHROMIUM" --headless --no-sandbox --disable-gpu \
        --disable-quic --no-first-run --disable-background-networking \
        --disable-component-update --disable-sync --user-data-dir="$TMP/ud" \
        --allow-file-access-from-files "$@" 2>/dev/null
}
# summary FILE: the viewer's #summary element for a timeline file
summary() { browse --dump-dom "file://$VIEW?trace=file://$1" | grep -o '<div id="summary"[^>]*>'; }
# bars FILE: "ORANGE BLUE" pixel counts of the screenshot, less the key's
bars() {
    browse --window-size=1200,700 --screenshot="$TMP/shot.png" "file://$VIEW?trace=file://$1" >/dev/null
    "$PY" "$D/png_colors.py" "$TMP/shot.png" f29d38 4a78c2 | awk '{printf "%d %d ", $2 - 144, $3}'
}

hvd "${PYX[@]}" -np 2 --timeline-filename "$TL" --timeline-mark-cycles "$PY" "$D/timeline_check.py"
check "the job wrote a timeline" [ "$RC" -eq 0 -a -s "$TL" ]
s=$(summary "$TL")
check "DOM: 7 tensors drawn ($s)" grep -q 'data-tensors="7"' <<<"$s"
check "DOM: 25 phases, none left open, none failed" \
    grep -q 'data-spans="25" data-open="0" data-failed="0"' <<<"$s"
check "DOM: the cycle marks" grep -Eq 'data-marks="[1-9][0-9]*"' <<<"$s"
read -r orange orows blue brows <<<"$(bars "$TL")"
check "screenshot: negotiation bars ($orange px in $orows rows)" [ "$orange" -gt 1000 -a "$orows" -ge 5 ]
check "screenshot: operation bars ($blue px in $brows rows)" [ "$blue" -gt 50 -a "$brows" -ge 5 ]
cp "$TMP/shot.png" "$TMP/good.png"

head -c 1500 "$TL" >"$TMP/cut.json"
s=$(browse --dump-dom "file://$VIEW?trace=file://$TMP/cut.json")
check "truncated: the page says it is not a valid timeline" grep -q 'not a valid timeline' <<<"$s"
read -r orange orows blue brows <<<"$(bars "$TMP/cut.json")"
check "truncated: no bar drawn ($orange px)" [ "$orange" -le 0 -a "$blue" -le 0 ]
echo '[]' >"$TMP/empty.json"
check "empty: 0 tensors" grep -q 'data-tensors="0"' <<<"$(summary "$TMP/empty.json")"
read -r orange orows blue brows <<<"$(bars "$TMP/empty.json")"
check "empty: no bar drawn ($orange px)" [ "$orange" -le 0 -a "$blue" -le 0 ]
[ -n "${TIMELINE_SHOT:-}" ] && cp "$TMP/good.png" "$TIMELINE_SHOT"
finish
