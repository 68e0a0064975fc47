#!/usr/bin/env bash
# The shared-memory transport of the ranks of one host: every check on 5-8
# ranks with it on and off; the segment is a memfd (never a name in
# /dev/shm), mode 0600, that another user cannot open, neither while
# ranks attach (a rank run as nobody) nor afterwards; nothing is left in
# /dev/shm however the job ends, SIGKILL of every rank included.
. "$(dirname "$0")/lib.sh"
CHECK=${COLL_CHECK:?set COLL_CHECK to the coll_check program}
LIB=${COLLECTIVE_LIB:?set COLLECTIVE_LIB to libcollective}
SEGMENT='memfd:hvd-collective'

ls -A /dev/shm >"$TMP/shm.before" 2>/dev/null
shm_unchanged() { ls -A /dev/shm 2>/dev/null | cmp -s - "$TMP/shm.before"; }

for np in 5 6 7 8; do
    for shm in 1 0; do
        hvd -x COLL_SHM=$shm -np $np "$CHECK"
        check "$np ranks, COLL_SHM=$shm: every rank passed every check" \
            [ "$RC" -eq 0 -a "$(grep -c 'checks passed$' "$TMP/out")" -eq $np ]
        [ "$RC" -eq 0 ] || sed 's/^/  | /' "$TMP/err" | head -5
    done
done

# every result, of every size, written with streaming stores (by default
# only those larger than the last level cache: none of coll_check's); on
# 2 ranks of 2 CPUs or more, beside the allreduce's reduced chunks, which
# go into the segment with streaming stores where ranks have a CPU each
for np in 2 3; do
    hvd -x COLL_SHM_STREAM_BYTES=1 -np $np "$CHECK"
    check "$np ranks, every result written with streaming stores: every rank passed every check" \
        [ "$RC" -eq 0 -a "$(grep -c 'checks passed$' "$TMP/out")" -eq $np ]
    [ "$RC" -eq 0 ] || sed 's/^/  | /' "$TMP/err" | head -5
done

# rank 0 chooses the sub-blocks from the CPUs it may use (a CPU per rank:
# larger ones), the others take its choice: here rank 1 alone is held to
# one CPU, and every check still passes on either side of the choice
for pinned in 0 1; do
    hvd -np 2 sh -c "[ \$HOROVOD_RANK = $pinned ] && exec taskset -c 0 $CHECK; exec $CHECK"
    check "2 ranks, rank $pinned held to one CPU: both passed every check" \
        [ "$RC" -eq 0 -a "$(grep -c 'checks passed$' "$TMP/out")" -eq 2 ]
    [ "$RC" -eq 0 ] || sed 's/^/  | /' "$TMP/err" | head -5
done

holding() { [ "$(grep -c 'holding' "$TMP/hold.out")" -eq "$1" ]; }
# hold_job SHM NP [HVDRUN ARGS]: a job of NP ranks (-np NP unless ARGS
# say otherwise) that stays connected in the background (hvdrun's pid in
# $JOB); the ranks' pids in $PIDS, $RIGHT of them got the right sum.
hold_job() {
    local shm=$1 np=$2
    shift 2
    [ $# -gt 0 ] || set -- -np "$np"
    # (ranks hold 120 s, ended by stop_job: long enough that a slow
    # start never lets the first ones end before they are looked at)
    "$HVDRUN" -x COLL_SHM="$shm" "$@" "$CHECK" hold 120 "$MARK" \
        >"$TMP/hold.out" 2>"$TMP/hold.err" &
    JOB=$!
    within 30 holding "$np" || true
    PIDS=$(sed -n 's/.*holding, pid \([0-9]*\),.*/\1/p' "$TMP/hold.out")
    RIGHT=$(grep -c 'holding, pid [0-9]*, right$' "$TMP/hold.out")
}
# segments PID: how many of the job's segments PID maps
segments() { grep -c -F "$SEGMENT" "/proc/$1/maps" 2>/dev/null; }
# ranks_mapping N: how many of $PIDS map exactly N segments
ranks_mapping() {
    local n=0 pid
    for pid in $PIDS; do [ "$(segments "$pid")" = "$1" ] && n=$((n + 1)); done
    echo $n
}
# the address range of the segment in PID's mappings (empty: none)
segment_range() { awk -v s="$SEGMENT" 'index($0, s) {print $1; exit}' "/proc/$1/maps" 2>/dev/null; }
# all_resident PID: every page of each of PID's segments is mapped
# (Rss = Size in smaps), so that no collective waits on page faults
all_resident() {
    awk -v s="$SEGMENT" '/^[0-9a-f]+-[0-9a-f]+ / {in_seg = index($0, s) > 0}
        in_seg && /^Size:/ {size += $2} in_seg && /^Rss:/ {rss += $2}
        END {exit !(size > 0 && rss == size)}' "/proc/$1/smaps" 2>/dev/null
}
ranks_resident() {
    local n=0 pid
    for pid in $PIDS; do all_resident "$pid" && n=$((n + 1)); done
    echo $n
}
# cannot COMMAND...: COMMAND fails
cannot() { ! "$@" >/dev/null 2>&1; }
# cannot_as_nobody COMMAND...: COMMAND fails when run as nobody
cannot_as_nobody() {
    ! setpriv --reuid=nobody --regid=nogroup --clear-groups "$@" \
        >/dev/null 2>&1
}
stop_job() { kill -INT "$JOB" 2>/dev/null; wait "$JOB" 2>/dev/null; }

hold_job 1 3
check "held job: 3 ranks up, the sum right" [ "$(echo $PIDS | wc -w)" -eq 3 -a "$RIGHT" -eq 3 ]
# the comm's and the fusion thread's
check "every rank maps 2 segments, memfds" [ "$(ranks_mapping 2)" -eq 3 ]
check "every page of the segments is mapped in every rank" \
    [ "$(ranks_resident)" -eq 3 ]
rank0=$(echo $PIDS | awk '{print $1}')
range=$(segment_range "$rank0")
check "no descriptor of the segment stays open" \
    [ -z "$(ls -l /proc/$rank0/fd 2>/dev/null | grep -F "$SEGMENT")" ]
check "nothing of the job in /dev/shm" shm_unchanged
if [ -n "$range" ] && [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
    check "the segment is 0600, the job's user's" \
        [ "$(stat -L -c '%a %u' "/proc/$rank0/map_files/$range")" = "600 $(id -u)" ]
    # root may open it (so the path is right) ...
    check "its owner's side can open it" \
        sh -c "head -c 8 /proc/$rank0/map_files/$range >/dev/null"
    # ... but not shrink or grow it under the ranks (sealed at its size)
    check "the segment cannot be truncated, even by its owner's side" \
        cannot truncate -s 0 "/proc/$rank0/map_files/$range"
    # ... and nobody may neither read nor write it
    check "another user cannot read the segment" \
        cannot_as_nobody head -c 8 "/proc/$rank0/map_files/$range"
    check "another user cannot write it" \
        cannot_as_nobody sh -c "printf x >> /proc/$rank0/map_files/$range"
    check "another user cannot reach it through the rank's memory" \
        cannot_as_nobody head -c 8 "/proc/$rank0/mem"
else
    echo "# skip: the stranger checks need root and setpriv"
fi
# every rank SIGKILLed: nothing of the job remains
kill -KILL $PIDS 2>/dev/null
wait "$JOB" 2>/dev/null
RC=$?
check "every rank SIGKILLed: the job ends 137" [ "$RC" -eq 137 ]
check "every rank SIGKILLed: /dev/shm as before" shm_unchanged
gone=0
for pid in $PIDS; do [ -d "/proc/$pid" ] || gone=$((gone + 1)); done
check "every rank SIGKILLed: every rank gone" [ "$gone" -eq 3 ]

hold_job 0 2
check "COLL_SHM=0: 2 ranks up, the sum right, no segment" \
    [ "$(echo $PIDS | wc -w)" -eq 2 -a "$RIGHT" -eq 2 -a "$(ranks_mapping 0)" -eq 2 ]
stop_job

# two "hosts" (this one, named twice) of 3 ranks, hierarchical: each host's
# ranks share a segment for the blocking calls' local step and one for
# the fusion thread's (the worlds go over TCP, as between hosts)
for shm in 1 0; do
    hold_job $shm 6 --hierarchical-allreduce -H localhost:3,127.0.0.1:3
    check "hierarchical on 2 hosts x 3, COLL_SHM=$shm: the sum right on 6 ranks" [ "$RIGHT" -eq 6 ]
    check "hierarchical on 2 hosts x 3, COLL_SHM=$shm: $((2 * shm)) segments in each rank" \
        [ "$(ranks_mapping $((2 * shm)))" -eq 6 ]
    stop_job
done
# no hierarchical flag: allreduce and allgather stay flat (on TCP), the
# broadcast's local steps take the one segment; none with COLL_SHM=0
for shm in 1 0; do
    hold_job $shm 6 -H localhost:3,127.0.0.1:3
    check "2 hosts x 3, COLL_SHM=$shm: right on 6 ranks" [ "$RIGHT" -eq 6 ]
    check "2 hosts x 3, COLL_SHM=$shm: $shm segment in each rank (the broadcast's)" \
        [ "$(ranks_mapping $shm)" -eq 6 ]
    stop_job
done
# hierarchical allgather alone: the comm's allreduces stay flat (on
# TCP), its allgather's and broadcast's local steps take the one segment
hold_job 1 6 --hierarchical-allgather -H localhost:3,127.0.0.1:3
check "hierarchical allgather on 2 hosts x 3: right on 6 ranks" [ "$RIGHT" -eq 6 ]
# (looked at again for up to 5 s; when it fails, the counts say which
# rank mapped what)
all_map() { [ "$(ranks_mapping "$1")" -eq "$2" ]; }
check "hierarchical allgather on 2 hosts x 3: 1 segment in each rank" \
    within 5 all_map 1 6
all_map 1 6 || for pid in $PIDS; do echo "  | pid $pid maps $(segments "$pid")"; done
stop_job

# a rank SIGKILLed in the middle of large allreduces: the others fail at
# once, naming it, and nothing of the job is left
timed_hvd --kill-grace 20 -np 3 "$CHECK" die-streaming 1 "$MARK"
check "rank 1 killed mid-allreduce: exit 137" [ "$RC" -eq 137 ]
check "rank 1 killed mid-allreduce: both others name it ($TOOK ms)" \
    [ "$(grep -c 'allreduce: rank 1 (pid [0-9]*) of this host ended in the middle of it' "$TMP/out")" -eq 2 ]
check "rank 1 killed mid-allreduce: over within 20 s ($TOOK ms)" [ "$TOOK" -lt 20000 ]
check "rank 1 killed mid-allreduce: /dev/shm as before" shm_unchanged
# (a segment lives only in its ranks' mappings: with them gone, it is)
check "rank 1 killed mid-allreduce: no rank left, so no segment" wait_gone 10

# a rank of another user cannot join: it cannot open rank 0's segment
# (nobody runs copies of the program and library it can read)
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
    mkdir -m 755 "$TMP/bin"
    cp "$CHECK" "$TMP/bin/coll_check"
    cp "$LIB" "$TMP/bin/$(basename "$LIB")"
    ln -s "$(basename "$LIB")" "$TMP/bin/libcollective.so.0" 2>/dev/null
    chmod 755 "$TMP" "$TMP/bin"/*
    cat >"$TMP/bin/as-nobody" <<EOF
#!/bin/sh
[ "\$HOROVOD_RANK" = 1 ] || exec "\$@"
export LD_LIBRARY_PATH=$TMP/bin
exec setpriv --reuid=nobody --regid=nogroup --clear-groups "\$@"
EOF
    chmod 755 "$TMP/bin/as-nobody"
    timed_hvd -x HOROVOD_GLOO_TIMEOUT_SECONDS=10 -np 2 \
        "$TMP/bin/as-nobody" "$TMP/bin/coll_check"
    check "a rank of another user: the job fails" [ "$RC" -ne 0 ]
    check "a rank of another user: it cannot open the segment" \
        grep -q "shared memory: cannot open rank 0's segment: Permission denied" \
        "$TMP/out" "$TMP/err"
    check "a rank of another user: over within 20 s ($TOOK ms)" [ "$TOOK" -lt 20000 ]
    [ "$RC" -ne 0 ] || sed 's/^/  | /' "$TMP/err" "$TMP/out" | head -10
else
    echo "# skip: a rank as another user needs root and setpriv"
fi
check "after every job: /dev/shm as before" shm_unchanged
check "no process of these jobs is left" wait_gone 10
finish
