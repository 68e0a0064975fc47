#!/usr/bin/env bash
# hvdd on loopback: Horovod's key-value protocol, long-poll, the token,
# limits, abort and heartbeats, standalone and inside hvdrun jobs.
. "$(dirname "$0")/lib.sh"
HVDD=${HVDD:?set HVDD to the hvdd binary}
TOOL=${HVDD_TOOL:?set HVDD_TOOL to the hvdd_tool test client}
command -v curl >/dev/null || { echo "skip: curl not installed"; exit 77; }

# A standalone hvdd for a 2-rank job on localhost.
# -d: it logs each request it holds (the long-poll checks wait on that).
start_hvdd -d --size 2 --hosts localhost:2
check "hvdd reports its port" [ -n "$PORT" ]
U=http://127.0.0.1:$PORT
export HVDD_TOKEN=$(cat "$TMP/token")
check "token file created, 64 hex digits" grep -qxE '[0-9a-f]{64}' "$TMP/token"
check "token file is private" [ "$(stat -c %a "$TMP/token")" = 600 ]

code() { curl -s -o "$TMP/body" -w '%{http_code}' "$@"; }

# Horovod's HTTP store: PUT, GET 200/404, each rank's DELETE of the key it
# put (its rank, as Gloo names it) clears the scope once all are in
check "PUT 200" [ "$(code -X PUT --data-binary 'addr-of-0' "$U/global/0")" = 200 ]
check "GET 200" [ "$(code "$U/global/0")" = 200 ]
check "GET returns the value" [ "$(cat "$TMP/body")" = addr-of-0 ]
check "GET missing 404" [ "$(code "$U/global/9")" = 404 ]
check "PUT the other rank's 200" [ "$(code -X PUT --data-binary 'addr-of-1' "$U/global/1")" = 200 ]
check "DELETE first rank 200" [ "$(code -X DELETE "$U/global/0")" = 200 ]
check "value kept until every rank is done" [ "$(code "$U/global/0")" = 200 ]
# made-up DELETEs finalise nothing (they wiped the real keys)
check "DELETE of a key nobody put: 404" [ "$(code -X DELETE "$U/global/x")" = 404 ]
check "DELETE of another made-up key: 404" [ "$(code -X DELETE "$U/global/7")" = 404 ]
check "made-up DELETEs left the keys" [ "$(code "$U/global/1")" = 200 ]
check "DELETE last rank 200" [ "$(code -X DELETE "$U/global/1")" = 200 ]
check "scope cleared" [ "$(code "$U/global/0")" = 404 ]
check "bad path 400" [ "$(code "$U/only-one-part")" = 400 ]
# a %00 in a key cut it short: k%00junk was stored as k
check "a key with %00: 400" [ "$(code -X PUT --data-binary v "$U/global/k%00junk")" = 400 ]
check "a key with %00: nothing stored under the cut name" [ "$(code "$U/global/k")" = 404 ]

# the job's own scopes (ring, nccl, hvdrun, ...) need the token for every
# read and write, from any address; the refusal changes nothing
AUTH="Authorization: Bearer $HVDD_TOKEN"
check "job scope: PUT with the token 200" [ "$(code -H "$AUTH" -X PUT --data-binary '127.0.0.1 1' "$U/ring/comm0-0")" = 200 ]
check "job scope: PUT without it 401" [ "$(code -X PUT --data-binary 'evil' "$U/ring/comm0-0")" = 401 ]
check "job scope: GET without it 401" [ "$(code "$U/ring/comm0-0")" = 401 ]
check "job scope: long-poll GET without it 401" [ "$(code "$U/ring/comm0-1?wait=2000")" = 401 ]
check "job scope: DELETE without it 401" [ "$(code -X DELETE "$U/ring/comm0-0")" = 401 ]
check "job scope: the value is the job's" [ "$(code -H "$AUTH" "$U/ring/comm0-0")" = 200 -a "$(cat "$TMP/body")" = '127.0.0.1 1' ]
check "job scope: the refusal is logged" grep -q 'refused PUT /ring/comm0-0: missing or wrong token' "$TMP/hvdd.err"

# a long-poll keeps its first deadline: PUT and DELETE of its key, again
# and again, woke it and held it again, each time for a full new wait
# (20 pairs, 0.3 s apart: past 6 s, with a wait of 1 s)
cat >"$TMP/rehold.py" <<'PY'
import os, socket, sys, threading, time
port, auth = int(sys.argv[1]), "Authorization: Bearer " + os.environ["HVDD_TOKEN"]
took = {}
def getter():
    t = time.time()
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    s.sendall(("GET /adhoc/zz?wait=1000 HTTP/1.1\r\nHost: x\r\n%s\r\n"
               "Connection: close\r\n\r\n" % auth).encode())
    while s.recv(4096):
        pass
    took["s"] = time.time() - t
g = threading.Thread(target=getter)
g.start()
time.sleep(0.2)
for _ in range(20):
    if not g.is_alive():
        break
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    s.sendall(("PUT /adhoc/zz HTTP/1.1\r\nHost: x\r\n%s\r\nContent-Length: 1"
               "\r\n\r\nvDELETE /adhoc/zz HTTP/1.1\r\nHost: x\r\n%s\r\n"
               "Connection: close\r\n\r\n" % (auth, auth)).encode())
    while s.recv(4096):
        pass
    s.close()
    time.sleep(0.3)
g.join(30)
print("%.1f" % took.get("s", 99))
PY
if command -v python3 >/dev/null; then
    T_REHOLD=$(python3 "$TMP/rehold.py" "$PORT")
    check "long-poll woken again and again ends near its wait (${T_REHOLD} s)" \
        awk -v t="$T_REHOLD" 'BEGIN { exit !(t < 4) }'
else
    echo "skip: python3 missing (the long-poll's deadline check)"
fi

# long-poll: a GET held until the PUT arrives. The PUT goes only once hvdd
# holds the GET: one that reached hvdd after the PUT would be answered at
# once and prove nothing.
held() { grep -q "GET /global/$1 held for kv/global/$1\$" "$TMP/hvdd.err"; }
waiter_done() { ! kill -0 "$WAITER" 2>/dev/null; }
"$TOOL" 127.0.0.1 "$PORT" get global late 10000 >"$TMP/late" &
WAITER=$!
check "long-poll: hvdd holds the GET" within 10 held late
check "long-poll: the GET is still waiting" [ ! -s "$TMP/late" ]
check "long-poll: the client too" kill -0 "$WAITER"
start=$(date +%s%N)
curl -s -X PUT --data-binary 'here' "$U/global/late" >/dev/null
within 5 waiter_done || kill "$WAITER" 2>/dev/null
wait "$WAITER"
rc=$?
took=$((($(date +%s%N) - start) / 1000000))
check "long-poll answered by the PUT ($took ms)" [ $rc -eq 0 -a "$took" -lt 5000 ]
check "long-poll got the value" [ "$(cat "$TMP/late")" = here ]
start=$(date +%s%N)
"$TOOL" 127.0.0.1 "$PORT" get global never 300 >/dev/null 2>&1
rc=$?
took=$((($(date +%s%N) - start) / 1000000))
check "long-poll times out with 404 after its wait ($took ms)" \
    [ $rc -eq 4 -a "$took" -ge 300 -a "$took" -lt 5000 ]
check "long-poll: that GET was held too" held never

# the control API needs the token; the attempt changes nothing and is logged
check "status without token 401" [ "$(code "$U/v1/status")" = 401 ]
check "abort with a wrong token 401" [ "$(code -H "Authorization: Bearer $(printf '%064d' 0)" -d '{"reason":"x"}' "$U/v1/abort")" = 401 ]
check "status with token 200" [ "$(code -H "Authorization: Bearer $HVDD_TOKEN" "$U/v1/status")" = 200 ]
check "not aborted by the refused call" grep -q '"aborted":false' "$TMP/body"
check "refusal logged" grep -q "refused POST /v1/abort: missing or wrong token" "$TMP/hvdd.err"

# the store answers only the job's addresses (127.0.0.1 here)
check "other address 403" [ "$(code --interface 127.0.0.2 "$U/global/rank_0")" = 403 ]

# limits: an oversized body is refused before it is read
head -c 3000000 /dev/zero >"$TMP/big"
check "2.9 MB PUT 413" [ "$(code -X PUT --data-binary @"$TMP/big" "$U/global/big")" = 413 ]
check "nothing stored" [ "$(code "$U/global/big")" = 404 ]
check "oversized control body 413" [ "$(code -H "Authorization: Bearer $HVDD_TOKEN" --data-binary @"$TMP/big" "$U/v1/abort")" = 413 ]

# identity through the client library
"$TOOL" 127.0.0.1 "$PORT" register localhost 1 >"$TMP/id"
check "register gives the planned identity" [ "$(cat "$TMP/id")" = "1 2 1 2 0 1 lo" ]
"$TOOL" 127.0.0.1 "$PORT" register otherhost 0 2>"$TMP/err" >/dev/null
check "register on the wrong host refused" grep -q "rank 0 belongs to host 'localhost', not 'otherhost'" "$TMP/err"

kill -TERM $HVDD_PID
wait $HVDD_PID
check "hvdd stops on SIGTERM with 0" [ $? -eq 0 ]

# the client retries while hvdd is not there yet, then gives a clear error
FREE=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null || echo 47391)
start=$(date +%s%N)
"$TOOL" 127.0.0.1 "$FREE" get global k 2>"$TMP/err"
rc=$?
took=$((($(date +%s%N) - start) / 1000000))
check "no hvdd: failure after the 5 s deadline ($took ms)" [ $rc -eq 1 -a "$took" -ge 4000 -a "$took" -lt 15000 ]
check "no hvdd: clear error" grep -q "cannot reach hvdd: GET http://127.0.0.1:$FREE/global/k" "$TMP/err"
(sleep 1; exec "$HVDD" --foreground --listen "127.0.0.1:$FREE" --size 1 --token-file "$TMP/token2" >/dev/null 2>&1) &
LATE=$!
"$TOOL" 127.0.0.1 "$FREE" put global k v 2>"$TMP/err"
check "client waits for an hvdd that starts late" [ $? -eq 0 ]
kill $LATE 2>/dev/null
pkill -f "token-file $TMP/token2"

"$HVDD" --size 2 >/dev/null 2>"$TMP/err"
check "hvdd without a token source: usage error 64" [ $? -eq 64 ]
"$HVDD" --token-file "$TMP/token" >/dev/null 2>"$TMP/err"
check "hvdd without --size: 64" [ $? -eq 64 ]

# inside hvdrun: workers meet through hvdd
hvd -np 2 sh -c 'if [ $HOROVOD_RANK = 0 ]; then "$0" $HOROVOD_GLOO_RENDEZVOUS_ADDR $HOROVOD_GLOO_RENDEZVOUS_PORT put job hello from-0; else "$0" $HOROVOD_GLOO_RENDEZVOUS_ADDR $HOROVOD_GLOO_RENDEZVOUS_PORT get job hello 10000; echo; fi' "$TOOL"
check "ranks exchange a key through the job's hvdd" grep -qx "\[1\]<stdout>:from-0" "$TMP/out"

# the job token is in no process's argv (grep reads it from a file)
hvd -np 2 sh -c 'echo "$HVDD_TOKEN" > "$0.$HOROVOD_RANK"; for f in /proc/[0-9]*/cmdline; do { tr "\0" " " < $f; } 2>/dev/null; echo; done | grep -c -F -f "$0.$HOROVOD_RANK"; true' "$TMP/tok"
check "token in no argv" [ "$(grep -c ':0$' "$TMP/out")" -eq 2 ]
check "token reached the workers" [ "$(wc -c <"$TMP/tok.0")" -eq 65 ]

# abort stops a running job with its reason
timed_hvd -np 3 bash -c "if [ \$HOROVOD_RANK = 0 ]; then sleep 0.3; \"\$0\" \$HOROVOD_GLOO_RENDEZVOUS_ADDR \$HOROVOD_GLOO_RENDEZVOUS_PORT abort 'loss is NaN'; fi; exec -a sleep-$MARK sleep 300" "$TOOL"
check "abort: exit 70 ($TOOK ms)" [ "$RC" -eq 70 -a "$TOOK" -lt 10000 ]
check "abort: reason shown" grep -qx "hvdrun: job stopped: loss is NaN" "$TMP/err"
check "abort: no worker left" wait_gone 3

# a rank whose heartbeats stop is declared dead and the job stopped
hvd --heartbeat-timeout 1 -np 2 bash -c "\"\$0\" \$HOROVOD_GLOO_RENDEZVOUS_ADDR \$HOROVOD_GLOO_RENDEZVOUS_PORT register localhost \$HOROVOD_RANK >/dev/null; n=100; [ \$HOROVOD_RANK = 1 ] && n=3; \"\$0\" \$HOROVOD_GLOO_RENDEZVOUS_ADDR \$HOROVOD_GLOO_RENDEZVOUS_PORT heartbeat \$HOROVOD_RANK \$n 200; exec -a sleep-$MARK sleep 300" "$TOOL"
check "heartbeat: exit 70" [ "$RC" -eq 70 ]
check "heartbeat: names rank and host" grep -q "job stopped: rank 1 on host 'localhost' (pid [0-9]*) sent no heartbeat" "$TMP/err"
check "heartbeat: no worker left" wait_gone 3

# a launched hvdd loads libmicrohttpd (and the TLS libraries it brings)
# at its first HTTP caller, not at its start (daemon/http_lib.h)
hvd -np 1 bash -c 'h=$(pgrep -P $PPID -x hvdd); m() { echo "$1 $(grep -c libmicrohttpd /proc/$h/maps)"; }; m before; curl -s -o /dev/null "http://$HOROVOD_GLOO_RENDEZVOUS_ADDR:$HOROVOD_GLOO_RENDEZVOUS_PORT/global/0"; m after'
check "lazy HTTP: not loaded before the first caller" grep -qx '\[0\]<stdout>:before 0' "$TMP/out"
check "lazy HTTP: loaded for it" grep -qE '^\[0\]<stdout>:after [1-9]' "$TMP/out"
# a library that cannot load: the job stops, saying so, and a standalone
# hvdd refuses to start
SONAME=$(grep -ao 'libmicrohttpd\.so\.[0-9]*' "$HVDD" | head -1)
mkdir -p "$TMP/badlib" && echo "not a library" >"$TMP/badlib/$SONAME"
LD_LIBRARY_PATH=$TMP/badlib timed_hvd -np 2 bash -c "curl -s -m 30 -o /dev/null http://\$HOROVOD_GLOO_RENDEZVOUS_ADDR:\$HOROVOD_GLOO_RENDEZVOUS_PORT/global/0; exec -a sleep-$MARK sleep 300"
check "HTTP library broken: exit 70 ($TOOK ms)" [ "$RC" -eq 70 -a "$TOOK" -lt 20000 ]
check "HTTP library broken: reason shown" grep -q "hvdrun: job stopped: hvdd cannot serve HTTP: cannot load $SONAME" "$TMP/err"
check "HTTP library broken: no worker left" wait_gone 3
LD_LIBRARY_PATH=$TMP/badlib timeout 10 "$HVDD" --foreground --listen 127.0.0.1:0 --token-file "$TMP/token" --size 1 --hosts localhost:1 >"$TMP/bad.out" 2>"$TMP/bad.err"
RC=$?
check "HTTP library broken, standalone: refuses to start (exit $RC)" [ "$RC" -eq 69 ]
check "HTTP library broken, standalone: says why" grep -q "cannot load $SONAME" "$TMP/bad.err"

# hvdd dying ends the job clearly
hvd -np 2 bash -c "if [ \$HOROVOD_RANK = 0 ]; then sleep 0.3; pkill -KILL -P \$PPID -x hvdd; fi; exec -a sleep-$MARK sleep 300"
check "hvdd killed: exit 70" [ "$RC" -eq 70 ]
check "hvdd killed: said so" grep -q "the rendezvous daemon hvdd exited" "$TMP/err"
finish
