#!/usr/bin/env bash
# hvdd under abuse from strangers on other loopback addresses: a flood of
# 20000 connections while a 4-rank job runs, a slowloris, unfinished
# uploads from an address the store refuses, a descriptor limit of 64,
# and SIGTERM under load. Throughout, hvdd stays small, a real client is
# answered within 1 s, and the job finishes. Every stranger is bounded in
# count and time and stopped by pid.
. "$(dirname "$0")/lib.sh"
HVDD=${HVDD:?set HVDD to the hvdd binary}
FLOOD=${HVDD_FLOOD:?set HVDD_FLOOD to the hvdd_flood program}
CHECK=${COLL_CHECK:?set COLL_CHECK to the coll_check program}
command -v curl >/dev/null || { echo "skip: curl not installed"; exit 77; }
command -v ss >/dev/null || { echo "skip: ss (iproute2) is missing"; exit 77; }
STRANGERS="127.0.0.2 127.0.0.3 127.0.0.4 127.0.0.5 127.0.0.6"

rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
# served PORT: a real client's request answered (404: no such key) within 1 s
served() {
    [ "$(curl -s -o /dev/null -m 1 -w '%{http_code}' "http://127.0.0.1:$1/global/nothing")" = 404 ]
}
stop() { [ -n "${1:-}" ] && kill "$1" 2>/dev/null; wait "$1" 2>/dev/null; }

# --- a 4-rank job's hvdd under a flood of 10000 connections and a
# --- slowloris of 10000 more ---
hvdd_of_job() { HV=$(ss -Hltnp "sport = :$P" | grep -o 'pid=[0-9]*' | head -1 | cut -d= -f2); [ -n "$HV" ]; }
# a free port, named to the job: another test's listener or client may
# take it first (then the job ends 70, "Address already in use": again)
for ((try = 0; try < 3; try++)); do
    P=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    timeout -k 5 90 "$HVDRUN" --rendezvous-port "$P" -np 4 sh -c \
        'sleep 3; exec "$0" stream "$1"' "$CHECK" "$MARK" >"$TMP/out" 2>"$TMP/err" &
    JOB=$!
    within 10 hvdd_of_job && break
    wait "$JOB"
    grep -q 'Address already in use' "$TMP/err" || break
done
check "flood: the job's hvdd listens" hvdd_of_job
"$FLOOD" "$P" open 10000 20 $STRANGERS >"$TMP/flood" 2>&1 &
F=$!
"$FLOOD" "$P" slow 10000 20 $STRANGERS >"$TMP/flood.slow" 2>&1 &
FS=$!
check "flood: the connections went" within 15 grep -q '^opened' "$TMP/flood"
check "flood: the slowloris too" within 15 grep -q '^opened' "$TMP/flood.slow"
check "flood: a real client is served within 1 s" served "$P"
maxrss=0
for ((i = 0; i < 300; i++)); do # 60 s at most
    r=$(rss_kb "$HV")
    [ "$r" -gt "$maxrss" ] && maxrss=$r
    kill -0 "$JOB" 2>/dev/null || break
    sleep 0.2
done
wait "$JOB"
RC=$?
stop "$F"
stop "$FS"
check "flood: $(sed -n 1p "$TMP/flood")" grep -q '^opened [0-9]* of 10000' "$TMP/flood"
check "flood: the job finished (exit $RC)" \
    [ "$RC" -eq 0 -a "$(grep -c 'checks passed$' "$TMP/out")" -eq 4 ]
check "flood: hvdd stayed under 128 MiB (peak $((maxrss / 1024)) MiB)" [ "$maxrss" -lt 131072 ]

# --- a standalone hvdd: the slowloris, the uploads, SIGTERM ---
start_hvdd --size 4
check "hvdd up" [ -n "$PORT" ]
"$FLOOD" "$PORT" slow 20000 25 $STRANGERS >"$TMP/slow" 2>&1 &
F=$!
check "slowloris: the connections went" within 15 grep -q '^opened' "$TMP/slow"
check "slowloris: a real client is served within 1 s" served "$PORT"
sleep 12 # past the 10 s hvdd gives a request's headers
held=$(ss -Htn state established "( sport = :$PORT )" | grep -c '127\.0\.0\.[2-6]:')
check "slowloris: after the header deadline, no stranger holds a connection ($held)" \
    [ "$held" -lt 20 ]
check "slowloris: a real client still is served within 1 s" served "$PORT"
stop "$F"

base=$(rss_kb "$HVDD_PID")
"$FLOOD" "$PORT" upload 1000 10 127.0.0.2 >"$TMP/upload" 2>&1 &
F=$!
check "uploads: started" within 15 grep -q '^opened' "$TMP/upload"
sleep 1
up=$(rss_kb "$HVDD_PID")
check "uploads from a refused address: hvdd grew by $(((up - base) / 1024)) MiB, under 32" \
    [ $((up - base)) -lt 32768 ]
check "uploads: a real client is served within 1 s" served "$PORT"
stop "$F"

"$FLOOD" "$PORT" open 20000 20 $STRANGERS >"$TMP/flood2" 2>&1 &
F=$!
within 15 grep -q '^opened' "$TMP/flood2"
t0=$(date +%s%N)
kill -TERM "$HVDD_PID"
wait "$HVDD_PID" 2>/dev/null
took=$((($(date +%s%N) - t0) / 1000000))
check "SIGTERM under a flood: hvdd stopped within 2 s ($took ms)" [ "$took" -lt 2000 ]
stop "$F"

# --- a descriptor limit of 64: no spinning on EMFILE, still serving ---
command -v prlimit >/dev/null || { echo "skip: prlimit missing"; finish; exit $?; }
prlimit --nofile=64 "$HVDD" --foreground --listen 127.0.0.1:0 --size 4 \
    --token-file "$TMP/token64" >"$TMP/h64.out" 2>"$TMP/h64.err" &
H64=$!
port64() { P64=$(awk '/^listening/ {print $2}' "$TMP/h64.out"); [ -n "$P64" ]; }
check "fd limit 64: hvdd up" within 5 port64
"$FLOOD" "$P64" open 100 10 127.0.0.2 >"$TMP/f64" 2>&1 &
F=$!
within 10 grep -q '^opened' "$TMP/f64"
c0=$(cpu_ticks "$H64")
sleep 2
c1=$(cpu_ticks "$H64")
check "fd limit 64: hvdd idle under 100 connections ($((c1 - c0)) ticks of CPU in 2 s)" \
    [ $((c1 - c0)) -lt 30 ]
check "fd limit 64: a real client is served within 1 s" served "$P64"
stop "$F"
# long-polls whose clients left at once (20, over the 16 one address may
# hold here) are answered and their descriptors closed: they held the
# address's share until their wait ended, 2 minutes with 127.0.0.1 (every
# rank of the job) shut out
# (hvdd closes the ones over the cap at once: a write to those must not
# end this script with SIGPIPE)
(
    trap '' PIPE
    for ((i = 0; i < 20; i++)); do
        exec 3<>"/dev/tcp/127.0.0.1/$P64" &&
            printf 'GET /global/never?wait=120000 HTTP/1.1\r\nHost: x\r\n\r\n' >&3
        exec 3>&-
    done
) 2>/dev/null
check "fd limit 64: 20 long-polls left by their clients do not shut loopback out" \
    within 5 served "$P64"
stop "$H64"
finish
