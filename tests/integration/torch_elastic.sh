#!/usr/bin/env bash
# collective.torch.elastic (Horovod's elastic API) through real rounds of
# a standalone hvdd, the test standing in for hvdrun's elastic mode:
# TorchState, commit, run; host c's worker is SIGKILLed at batch 10 and a
# and b go on (the failure rolls them back to their commit and they
# sync); at batch 20 c comes back as a new worker, gets the state from
# rank 0, and every rank ends at batch 30 with the same parameters.
. "$(dirname "$0")/lib.sh"
python_binding torch python3-torch
. "$(dirname "$0")/elastic_lib.sh"
command -v curl >/dev/null || { echo "skip: curl not installed"; exit 77; }
WORKER="$(dirname "$0")/torch_elastic_check.py"
# (an ASan libcollective in a plain python3: the runtimes first)
PRE=()
[ -n "${SANITIZE_PRELOAD:-}" ] && PRE=(env "LD_PRELOAD=$SANITIZE_PRELOAD" ASAN_OPTIONS=detect_leaks=0)

said_in() { grep -q "$2" "$TMP/w.$1"; }

check "ElasticSampler: every sample once, also across a change of ranks" \
    "${PRE[@]}" "$PY" "$(dirname "$0")/elastic_sampler_check.py"

elastic_hvdd a:1,b:1,c:1
worker a 0 3 0 "${PRE[@]}" "$PY" "$WORKER" "$MARK"
worker b 1 3 0 "${PRE[@]}" "$PY" "$WORKER" "$MARK"
worker c 2 3 0 "${PRE[@]}" "$PY" "$WORKER" "$MARK"
for h in a b c; do
    check "round 0: $h started" within 90 said_in $h.0 'of 3 joined round 0 at batch 0'
done
# once all wait at batch 10 for round 1, c's host dies
for h in a b c; do
    check "round 0: $h waits at batch 10" within 30 said_in $h.0 'waits at batch 10 for round 1'
done
kill -KILL "$W_c"
wait "$W_c" 2>/dev/null
check "round 1 (a, b): 200" [ "$(round a:1,b:1 "a:$W_a" "b:$W_b")" = 200 ]
check "round 1: a rolled back to its commit at batch 10, rank 0 of 2" \
    within 30 said_in a.0 'rank 0 of 2 joined round 1 at batch 10'
check "round 1: b likewise, rank 1 of 2" \
    within 30 said_in b.0 'rank 1 of 2 joined round 1 at batch 10'

# at batch 20 they wait for round 2: c comes back, new
check "round 2 (a, b and a new c): 200" \
    [ "$(round a:1,b:1,c:1 "a:$W_a" "b:$W_b")" = 200 ]
worker c 2 3 2 "${PRE[@]}" "$PY" "$WORKER" "$MARK"
check "round 2: the new c got the state (batch 20, not 0) from rank 0" \
    within 90 said_in c.2 'rank 2 of 3 joined round 2 at batch 20'
for w in "$W_a" "$W_b" "$W_c"; do wait "$w"; echo "exit $?" >>"$TMP/codes"; done
check "every worker exits 0" [ "$(grep -c '^exit 0$' "$TMP/codes")" -eq 3 ]
check "every rank ends at batch 30 in round 2" \
    [ "$(cat "$TMP"/w.a.0 "$TMP"/w.b.0 "$TMP"/w.c.2 | grep -c 'of 3, round 2, batch 30, params')" -eq 3 ]
sums=$(cat "$TMP"/w.a.0 "$TMP"/w.b.0 "$TMP"/w.c.2 | sed -n 's/.*params //p' | sort -u | wc -l)
check "the same parameters on every rank" [ "$sums" -eq 1 ]
check "no worker left" wait_gone 5
for f in "$TMP"/w.*; do
    [ "$FAIL" -gt 0 ] && tail -n 15 "$f" | sed "s|^|  ${f##*/} |"
done
finish
