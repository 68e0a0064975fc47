#!/usr/bin/env bash
# Output: tagged whole lines, nothing lost under heavy concurrent output,
# partial last lines, progress bars, timestamps, --output-filename.
. "$(dirname "$0")/lib.sh"
SPEW=${SPEW:?set SPEW to the spew test program}

N=20000
NP=4
hvd -np $NP "$SPEW" $N
check "spew job exits 0" [ "$RC" -eq 0 ]

# Every line must be "[r]<tag>:Rr:i:" and exactly i*7%200 letters: a torn
# or interleaved line breaks the pattern or the length.
verify() {
    awk -v tag="$2" -v np=$NP -v n=$N '
    {
        if (!match($0, /^\[[0-9]+\]<[a-z]+>:R[0-9]+:[0-9]+:a*$/)) { bad++; next }
        split($0, f, ":")
        r = substr(f[1], 2, index(f[1], "]") - 2)
        if (f[1] != "[" r "]<" tag ">" || f[2] != "R" r) { bad++; next }
        if (length(f[4]) != (f[3] * 7) % 200) { bad++; next }
        count[r]++
        bytes += length($0) - length(f[1]) - 1 + 1
    }
    END {
        for (r = 0; r < np; r++) if (count[r] != n) bad++
        expect = 0
        for (i = 0; i < n; i++) expect += length("R0:" i ":") + (i * 7) % 200 + 1
        # ranks are single digits here, so every rank has the same bytes
        if (bytes != expect * np) { print "bytes", bytes, "want", expect * np; bad++ }
        exit bad > 0
    }' "$1"
}
check "stdout: no torn line, nothing lost ($((N * NP)) lines)" verify "$TMP/out" stdout
check "stderr: no torn line, nothing lost" verify "$TMP/err" stderr

hvd -np 2 sh -c 'printf "first\nno newline at end"'
check "partial last line flushed" grep -qxF "[1]<stdout>:no newline at end" "$TMP/out"

hvd -np 1 sh -c 'printf " 10%%\r 50%%\r100%%\n"'
check "progress bar keeps its carriage returns" \
    cmp -s "$TMP/out" <(printf '[0]<stdout>: 10%%\r[0]<stdout>: 50%%\r[0]<stdout>:100%%\n')

hvd --prefix-timestamp -np 1 echo hi
check "timestamp prefix" grep -qE '^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:.]{12} \[0\]<stdout>:hi$' "$TMP/out"
hvd --prefix-output-with-timestamp -np 1 echo hi
check "horovodrun's spelling of it" grep -qE '^[0-9-]{10} .*\[0\]<stdout>:hi$' "$TMP/out"

hvd --output-filename "$TMP/logs" -np 1 sh -c 'echo out; echo err >&2'
check "output file stdout (-np 1)" grep -qx out "$TMP/logs/rank.0/stdout"
check "output file stderr (-np 1)" grep -qx err "$TMP/logs/rank.0/stderr"
check "output still on the terminal" grep -qxF "[0]<stdout>:out" "$TMP/out"
hvd --output-filename "$TMP/logs12" -np 12 sh -c 'echo r$HOROVOD_RANK'
check "rank dirs padded" grep -qx r3 "$TMP/logs12/rank.03/stdout"
check "rank 11 file" grep -qx r11 "$TMP/logs12/rank.11/stdout"
# --- the job page's URL holds the token: --status-url prints it;
# --- --verbose only on a terminal (into a file: the port alone) ---
hvd --status-url -np 1 true
check "--status-url: the page's URL with the token" \
    grep -Eq '^hvdrun: job page: http://127\.0\.0\.1:[0-9]+/job#token=[0-9a-f]{64}$' "$TMP/err"
hvd --verbose -np 1 true
check "--verbose into a file: the page's port, no token" \
    grep -Eq '^hvdrun: job page: port [0-9]+ \(--status-url prints its URL' "$TMP/err"
no_token_line() { ! grep -q 'token=' "$TMP/err"; }
check "--verbose into a file: no token anywhere" no_token_line
if command -v script >/dev/null; then
    script -qec "$HVDRUN --verbose -np 1 true" /dev/null >"$TMP/tty" 2>&1
    check "--verbose on a terminal: the page's URL" grep -q 'job page: http://127.0.0.1:[0-9]*/job#token=' "$TMP/tty"
fi
finish
