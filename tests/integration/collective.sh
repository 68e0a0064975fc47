#!/usr/bin/env bash
# libcollective through hvdrun and hvdd: every operation, type
# and op against a local reference on 1-4 ranks; a count mismatch and a
# dead peer are errors, not aborts or hangs.
. "$(dirname "$0")/lib.sh"
CHECK=${COLL_CHECK:?set COLL_CHECK to the coll_check program}
HELLO=${HELLO:?set HELLO to the hello example}
# The same checks run on each transport: shared memory among the ranks of
# one host (integration.collective, the default), the TCP ring
# (integration.collective_tcp sets COLL_SHM=0) and Gloo
# (integration.collective_gloo: COLL_TRANSPORT=gloo too); hvdrun forwards
# the variables to the workers. Only the words of a timeout differ.
# A dead peer: the TCP ring fails every rank at once (60 s would be far
# too late); Gloo fails only the ranks whose connections see it, and one
# whose send to it is pending waits for the timeout (8 s here, within the
# checks' 20 s).
case "${COLL_SHM:-1}/${COLL_TRANSPORT:-tcp}" in
1/*)
    TIMEOUT_WORDS='allreduce: no progress from rank .* of this host for 3 s'
    DEAD_TIMEOUT=60
    ;;
*/gloo)
    TIMEOUT_WORDS='allreduce: .*Timed out waiting 3000ms'
    DEAD_TIMEOUT=8
    ;;
*)
    TIMEOUT_WORDS='allreduce: no progress with rank .* for 3 s'
    DEAD_TIMEOUT=60
    ;;
esac
echo "# transport: ${COLL_TRANSPORT:-tcp}, COLL_SHM=${COLL_SHM:-1}"

hvd -x COLL_TRANSPORT=nosuch -np 2 "$HELLO"
check "unknown COLL_TRANSPORT: every rank fails, naming it" \
    [ "$RC" -eq 1 -a "$(grep -c "COLL_TRANSPORT='nosuch': use tcp (the default) or gloo" "$TMP/out" "$TMP/err" | awk -F: '{n += $2} END {print n}')" -ge 2 ]

for np in 1 2 3 4; do
    hvd -np $np "$CHECK"
    check "$np ranks: exit 0" [ "$RC" -eq 0 ]
    check "$np ranks: every rank passed every check" \
        [ "$(grep -c 'checks passed$' "$TMP/out")" -eq $np ]
done

# alltoall(v) on 5 and 6 ranks: each rank's chords (its streams to ranks
# that are not its neighbours) send to one rank while they receive from
# another, and on 6 ranks one step sends and receives on one chord
for np in 5 6; do
    hvd -np $np "$CHECK" alltoall
    check "alltoall(v), $np ranks: every rank passed" \
        [ "$RC" -eq 0 -a "$(grep -c 'checks passed$' "$TMP/out")" -eq $np ]
done

# 33 ranks: the control exchanges' (argument checks, barrier, fusion
# cycle) last step is a short one; alltoall(v) on 32 chords each, and,
# with COLL_MESH_RANKS=32, on Gloo's full mesh
hvd -np 33 "$CHECK" wide
check "33 ranks: every rank passed" \
    [ "$RC" -eq 0 -a "$(grep -c 'checks passed$' "$TMP/out")" -eq 33 ]
hvd -x COLL_MESH_RANKS=32 -np 33 "$CHECK" wide
check "33 ranks, alltoall(v) on Gloo: every rank passed" \
    [ "$RC" -eq 0 -a "$(grep -c 'checks passed$' "$TMP/out")" -eq 33 ]

# the identity coll_init reads, on two "hosts" (this one, named twice)
hvd -H localhost:2,127.0.0.1:1 "$HELLO"
check "identity: rank 1" grep -q '^\[1\]<stdout>:rank 1 of 3 (local 1 of 2, cross 0 of 1)' "$TMP/out"
check "identity: rank 2" grep -q '^\[2\]<stdout>:rank 2 of 3 (local 0 of 1, cross 1 of 2)' "$TMP/out"

# hierarchical allreduce (local, then local_rank 0 across, then local
# broadcast), also with hosts of different sizes
for spec in localhost:2,127.0.0.1:2/4 localhost:2,127.0.0.1:1/3 \
    localhost:1,127.0.0.1:3/4; do
    np=${spec#*/}
    hvd --hierarchical-allreduce -H "${spec%/*}" "$CHECK"
    check "hierarchical allreduce on ${spec%/*}: all $np ranks passed" \
        [ "$RC" -eq 0 -a "$(grep -c 'checks passed$' "$TMP/out")" -eq "$np" ]
done

# hierarchical allgather (alone, and with the hierarchical allreduce): in
# each host, across hosts among local_rank 0, then a broadcast in each host
for spec in localhost:2,127.0.0.1:2/4 localhost:1,127.0.0.1:3/4; do
    np=${spec#*/}
    hvd --hierarchical-allgather -H "${spec%/*}" "$CHECK"
    check "hierarchical allgather on ${spec%/*}: all $np ranks passed" \
        [ "$RC" -eq 0 -a "$(grep -c 'checks passed$' "$TMP/out")" -eq "$np" ]
done
hvd --hierarchical-allgather --hierarchical-allreduce -H localhost:3,127.0.0.1:2 "$CHECK"
check "hierarchical allgather and allreduce on localhost:3,127.0.0.1:2: all 5 ranks passed" \
    [ "$RC" -eq 0 -a "$(grep -c 'checks passed$' "$TMP/out")" -eq 5 ]

# no flag: broadcast and reducescatter take two levels by themselves
# (shared memory in each host); reducescatter's lanes need equal hosts
for spec in localhost:3,127.0.0.1:3/6 localhost:2,127.0.0.1:2/4; do
    np=${spec#*/}
    hvd -H "${spec%/*}" "$CHECK"
    check "two levels by themselves on ${spec%/*}: all $np ranks passed" \
        [ "$RC" -eq 0 -a "$(grep -c 'checks passed$' "$TMP/out")" -eq "$np" ]
    [ "$RC" -eq 0 ] || sed 's/^/  | /' "$TMP/err" | head -5
done

# a fusion buffer smaller than some requests: they go alone, the rest fuse
hvd -x HOROVOD_FUSION_THRESHOLD=4096 -x HOROVOD_CYCLE_TIME=3 -np 3 "$CHECK"
check "small fusion buffer: every rank passed" \
    [ "$RC" -eq 0 -a "$(grep -c 'checks passed$' "$TMP/out")" -eq 3 ]

# join: ranks with fewer batches join, the others' allreduces go on
for np in 2 3; do
    hvd -np $np "$CHECK" join
    check "join on $np ranks: every rank passed, the last to join named" \
        [ "$RC" -eq 0 -a "$(grep -c "join passed, last $((np - 1))\$" "$TMP/out")" -eq $np ]
    [ "$RC" -eq 0 ] || sed 's/^/  | /' "$TMP/err" | head -5
done

hvd -np 3 "$CHECK" mismatch
check "count mismatch: error on every rank, no abort" [ "$RC" -eq 0 ]
check "count mismatch: reported" \
    [ "$(grep -c ': ranks called the operation with different arguments: allreduce' "$TMP/out")" -eq 3 ]
check "small against large count: reported on every rank" \
    [ "$(grep -c 'small/large: ranks called the operation with different arguments' "$TMP/out")" -eq 3 ]
check "alltoallv count mismatch: reported on every rank" \
    [ "$(grep -c 'alltoallv: ranks called the operation with different arguments' "$TMP/out")" -eq 3 ]
check "allreduce against allgather: reported on every rank" \
    [ "$(grep -c 'kinds: ranks called the operation with different arguments' "$TMP/out")" -eq 3 ]

# the same wrong arguments on every rank (NULL buffers with counts, counts
# whose bytes wrap): COLL_EINVAL each, the comm still in step; a request
# waited for after coll_finalize (an ASan build catches a read of the
# freed comm)
for np in 1 3; do
    hvd -np $np "$CHECK" misuse
    check "misuse on $np ranks: COLL_EINVAL everywhere, still in step" \
        [ "$RC" -eq 0 -a "$(grep -c 'misuse passed' "$TMP/out")" -eq $np ]
    [ "$RC" -eq 0 ] || sed 's/^/  | /' "$TMP/out" "$TMP/err" | head -8
done

timed_hvd --kill-grace 20 -np 3 "$CHECK" die 1
check "dead peer: hvdrun reports rank 1's signal" grep -q "rank 1 on localhost was killed by signal 9" "$TMP/err"
check "dead peer: exit 137" [ "$RC" -eq 137 ]
check "dead peer: the others got an error ($TOOK ms)" \
    [ "$(grep -c 'a peer failed or timed out: \(allreduce\|barrier\)' "$TMP/out")" -eq 2 ]
check "dead peer: the comm is dead afterwards" \
    [ "$(grep -c 'after: the communicator failed earlier' "$TMP/out")" -eq 2 ]
# (on failure, show what happened; it used to be SIGPIPE from Gloo)
[ "$RC" -eq 137 ] || sed 's/^/  | /' "$TMP/err" "$TMP/out" | head -30
# a rank dies before any collective: the others' first one fails at once
# (the ring connected in coll_init), not after the timeout (60 s on the ring)
timed_hvd --kill-grace 20 -x HOROVOD_GLOO_TIMEOUT_SECONDS=$DEAD_TIMEOUT -np 3 "$CHECK" die-at-start 1
check "dead before any collective: exit 137" [ "$RC" -eq 137 ]
check "dead before any collective: 2 barrier errors within 20 s ($TOOK ms)" \
    [ "$(grep -c 'a peer failed or timed out: barrier' "$TMP/out")" -eq 2 -a "$TOOK" -lt 20000 ]

# a rank dies while large allreduces stream: every other rank gets an
# allreduce error long before the timeout (60 s on the ring), also one whose
# neighbours both live (rank 3 of 4, when rank 1 dies)
timed_hvd --kill-grace 20 -x HOROVOD_GLOO_TIMEOUT_SECONDS=$DEAD_TIMEOUT -np 4 "$CHECK" die-streaming 1
check "dead peer while streaming: exit 137" [ "$RC" -eq 137 ]
check "dead peer while streaming: hvdrun names rank 1" \
    grep -q "rank 1 on localhost was killed by signal 9" "$TMP/err"
check "dead peer while streaming: 3 allreduce errors" \
    [ "$(grep -c 'a peer failed or timed out: allreduce' "$TMP/out")" -eq 3 ]
check "dead peer while streaming: within 20 s ($TOOK ms)" [ "$TOOK" -lt 20000 ]
[ "$RC" -eq 137 ] || sed 's/^/  | /' "$TMP/err" "$TMP/out" | head -30
# the same in alltoalls on 5 ranks: rank 2's chords and ring streams
# close, and every survivor fails, whichever rank it was exchanging with
timed_hvd --kill-grace 20 -x HOROVOD_GLOO_TIMEOUT_SECONDS=$DEAD_TIMEOUT -np 5 "$CHECK" die-alltoall 2
check "dead peer in alltoall: exit 137" [ "$RC" -eq 137 ]
check "dead peer in alltoall: 4 alltoall errors" \
    [ "$(grep -c 'a peer failed or timed out: alltoall' "$TMP/out")" -eq 4 ]
check "dead peer in alltoall: within 20 s ($TOOK ms)" [ "$TOOK" -lt 20000 ]
[ "$RC" -eq 137 ] || sed 's/^/  | /' "$TMP/err" "$TMP/out" | head -30
# a rank stops (SIGSTOP) while large allreduces stream: its neighbours
# give up after the timeout (3 s here), the rest at once after them, or
# after their own timeout if they were waiting on the stopped rank through
# a chord (an argument check's step): the grace (5 s) lets them say so on
# a busy machine before hvdrun kills what is left
timed_hvd --kill-grace 5 -x HOROVOD_GLOO_TIMEOUT_SECONDS=3 -np 4 "$CHECK" stall-streaming 1
check "stopped peer while streaming: 3 allreduce errors" \
    [ "$(grep -c 'a peer failed or timed out: allreduce' "$TMP/out")" -eq 3 ]
check "stopped peer while streaming: the timeout named" \
    grep -q "$TIMEOUT_WORDS" "$TMP/out"
check "stopped peer while streaming: over within 15 s ($TOOK ms)" \
    [ "$TOOK" -lt 15000 ]
# each rank queues an async name no other rank queues: after the timeout
# (2 s here) each gets an error naming the ranks that did not, instead of
# waiting for ever, and the comm goes on
timed_hvd -x HOROVOD_GLOO_TIMEOUT_SECONDS=2 -np 3 "$CHECK" unmatched
check "unmatched async names: an error on every rank" \
    [ "$(grep -c 'did not queue it within 2 s$' "$TMP/out")" -eq 3 ]
check "unmatched async names: rank 0's names ranks 1 and 2" \
    grep -q 'rank 0: unmatched: .*only-0: ranks 1 and 2 did not queue it' "$TMP/out"
check "unmatched async names: the comm goes on" \
    [ "$(grep -c 'then: success, 3$' "$TMP/out")" -eq 3 ]
check "unmatched async names: over within 10 s ($TOOK ms)" [ "$TOOK" -lt 10000 ]

# heartbeats: a stopped rank is declared dead and named; a finished one
# that keeps running is not
hvd --heartbeat-timeout 1 --kill-grace 1 -np 2 "$CHECK" hang
check "hung rank: exit 70" [ "$RC" -eq 70 ]
check "hung rank: named" grep -q "job stopped: rank 1 on host 'localhost' (pid [0-9]*) sent no heartbeat" "$TMP/err"
# (2 s: a loaded machine may delay a beat by more than one; linger lasts 4)
hvd --heartbeat-timeout 2 -np 2 "$CHECK" linger
check "finished ranks are not lost ones" [ "$RC" -eq 0 -a "$(grep -c 'rank done' "$TMP/out")" -eq 2 ]
# ranks not numbered host by host (started by hand beside a standalone
# hvdd: "host" A has ranks 0 and 2, B ranks 1 and 3): the hierarchical
# calls see it and stay flat, instead of grouping ranks of different hosts
# (rank - local_rank named rank 2's group after rank 1, and the job hung)
start_hvdd --size 4
ranks=()
for r in 0 1 2 3; do
    env HOROVOD_GLOO_RENDEZVOUS_ADDR=127.0.0.1 HOROVOD_GLOO_RENDEZVOUS_PORT="$PORT" \
        HVDD_TOKEN="$(cat "$TMP/token")" HOROVOD_GLOO_IFACE=lo \
        HOROVOD_RANK=$r HOROVOD_SIZE=4 HOROVOD_LOCAL_RANK=$((r / 2)) \
        HOROVOD_LOCAL_SIZE=2 HOROVOD_CROSS_RANK=$((r % 2)) HOROVOD_CROSS_SIZE=2 \
        HOROVOD_HIERARCHICAL_ALLREDUCE=1 HOROVOD_HIERARCHICAL_ALLGATHER=1 \
        HOROVOD_GLOO_TIMEOUT_SECONDS=10 \
        timeout -k 5 60 "$CHECK" all "$MARK" >"$TMP/rr.$r" 2>&1 &
    ranks+=($!)
done
wait "${ranks[@]}" # (not hvdd)
check "ranks of 2 hosts numbered round-robin, hierarchical: all 4 passed" \
    [ "$(cat "$TMP"/rr.* | grep -c 'checks passed$')" -eq 4 ]
grep -hv 'checks passed$' "$TMP"/rr.* | head -4 | sed 's/^/  | /'
finish
