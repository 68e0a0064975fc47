#!/usr/bin/env bash
# The job's live page (hvdd's GET /job) in headless Chromium, for a real
# 3-host elastic job on the lab hosts: the rendered DOM shows every rank
# running on its host with its pid, every host's agent and address; after
# a worker on host 2 is SIGKILLed, a new load shows its rank failed (exit
# 137) while the job goes on; without the token the page shows nothing of
# the job, and GET /v1/status is refused. The URL comes from hvdrun
# --status-url (stderr, never argv). Needs root and Debian's chromium.
. "$(dirname "$0")/../integration/lib.sh"
CHECK=${ELASTIC_CHECK:?set ELASTIC_CHECK to the elastic_check program}
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
[ -x "$CHROMIUM" ] || { echo "skip: no $CHROMIUM (apt-get install chromium)"; exit 77; }
. "$(dirname "$0")/lab.sh"
H="${ADDR[0]}:2,${ADDR[1]}:2,${ADDR[2]}:2"

browse() {
    timeout 60 "$CHROMIUM" --headless --no-sandbox --disable-gpu \
        --disable-quic --no-first-run --disable-background-networking \
        --disable-component-update --disable-sync --user-data-dir="$TMP/ud" \
        "$@" 2>/dev/null
}
: >"$TMP/out"
: >"$TMP/err"
"$HVDRUN" --status-url --min-np 2 -H "$H" "$CHECK" 9 "$MARK" >"$TMP/out" 2>"$TMP/err" &
pid=$!
started() { [ "$(grep -c 'of 6 in round 0' "$TMP/out")" -eq 6 ]; }
check "the job runs on 3 hosts" within 30 started
URL=$(sed -n 's/^hvdrun: job page: //p' "$TMP/err")
check "hvdrun --status-url printed the page's URL, the token in its fragment" \
    grep -Eq '^http://127\.0\.0\.1:[0-9]+/job#token=[0-9a-f]{64}$' <<<"$URL"
no_token_in_argv() { ! tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q "${URL##*=}"; }
check "the token is not in hvdrun's argv" no_token_in_argv

browse --dump-dom "$URL" >"$TMP/dom"
running() { grep -o '<tr class="running"><td>[0-9]*</td><td>[^<]*</td><td>registered</td><td>[0-9]*</td>' "$TMP/dom"; }
check "DOM: 6 ranks running, each with its pid" [ "$(running | wc -l)" -eq 6 ]
for a in "${ADDR[@]}"; do
    check "DOM: host $a's two ranks" [ "$(running | grep -c "<td>$a</td>")" -eq 2 ]
    check "DOM: host $a's agent runs, with its address" \
        grep -q "<td>$a</td><td>2</td><td>running</td><td>[a-z0-9]*</td><td>$a</td>" "$TMP/dom"
done
check "DOM: no rank failed" grep -q 'data-failed="0"' "$TMP/dom"

# a worker of host 2 SIGKILLed: its rank shows failed, the job goes on
victim=$(lab_workers 2 | head -1)
kill -KILL "$victim"
check "the job goes on without host 2" within 30 grep -q "host ${ADDR[1]} failed" "$TMP/err"
browse --dump-dom "$URL" >"$TMP/dom"
check "DOM: the killed worker shows among the failed (heard in round 0 or 1), exit 137" \
    grep -q "<tr class=\"failed\"><td>[01]</td><td>[0-9]*</td><td>${ADDR[1]}</td><td>$victim</td><td>137</td>" "$TMP/dom"
check "DOM: the job is in round 1" grep -q 'data-round="1"' "$TMP/dom"
check "DOM: the failed workers counted (the killed one, and its host's other, stopped)" grep -Eq 'data-failed="[12]"' "$TMP/dom"
browse --window-size=1000,700 --screenshot="$TMP/page.png" "$URL" >/dev/null
check "screenshot taken" [ -s "$TMP/page.png" ]
[ -n "${PAGE_SHOT:-}" ] && cp "$TMP/page.png" "$PAGE_SHOT"

# without the token: nothing of the job
browse --dump-dom "${URL%%#*}" >"$TMP/dom"
check "no token: the page says it is refused" grep -q 'refused: this page needs the job' "$TMP/dom"
no_ranks() { ! grep -q '<tr class="running">' "$TMP/dom"; }
check "no token: no rank shown" no_ranks
code=$(curl -s -o /dev/null -w '%{http_code}' "${URL%%/job*}/v1/status")
check "no token: GET /v1/status is 401" [ "$code" = 401 ]

kill -INT "$pid"
job_over() { ! kill -0 "$pid" 2>/dev/null; }
within 30 job_over || kill -KILL "$pid"
wait "$pid" 2>/dev/null
check "nothing left on any host" lab_clean_within 10
[ "$FAIL" -eq 0 ] || tail -n 8 "$TMP/err" | sed 's/^/  | /'
finish
