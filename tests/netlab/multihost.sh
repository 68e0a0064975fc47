#!/usr/bin/env bash
# Multi-host jobs on namespaced hosts with real sshd (netlab.sh): identity,
# the NIC hvdd chose (never a decoy), a cross-host allreduce, output, a
# failing remote rank, SIGINT and SIGKILL of hvdrun, and every SSH failure
# reported before any worker starts. Needs root; skips (77) without it.
. "$(dirname "$0")/../integration/lib.sh"
CHECK=${COLL_CHECK:?set COLL_CHECK to the coll_check program}
SPEW=${SPEW:?set SPEW to the spew test program}
SRC=${SRC:?set SRC to the source folder}

. "$(dirname "$0")/lab.sh"
H="${ADDR[0]}:2,${ADDR[1]}:2,${ADDR[2]}:2"

# start_job HVDRUN-ARGS...: a 6-rank job in the background whose ranks say
# "up" and sleep (or run $WORKER); $pid is hvdrun's (not under timeout(1):
# a signal must reach hvdrun itself). Returns once all are up, or after
# 30 s (saying how many were).
all_up() { [ "$(grep -c ':up$' "$TMP/out")" -eq 6 ]; }
start_job() {
    "$HVDRUN" -H "$H" "$@" sh -c "${WORKER:-echo up; exec sleep 60} # $MARK" \
        >"$TMP/out" 2>"$TMP/err" &
    pid=$!
    # (30 s: under CI's load three SSH starts took more than 10 once)
    within 30 all_up && return 0
    echo "  | $(grep -c ':up$' "$TMP/out") of 6 ranks up; hvdrun's last words:"
    tail -5 "$TMP/err" | sed 's/^/  | /'
    return 1
}
# end_job: waits (at most 20 s, then kills) for hvdrun; its status in $RC.
job_over() { ! kill -0 "$pid" 2>/dev/null; }
end_job() {
    within 20 job_over || kill -KILL "$pid" 2>/dev/null
    wait "$pid"
    RC=$?
}

# --- identity and network ---
hvd -H "$H" sh -c 'echo "id $HOROVOD_RANK $HOROVOD_SIZE $HOROVOD_LOCAL_RANK $HOROVOD_CROSS_RANK $HOROVOD_HOSTNAME $RANK $LOCAL_RANK $GROUP_RANK net $HOROVOD_GLOO_IFACE $NCCL_SOCKET_IFNAME $MASTER_ADDR $HOROVOD_GLOO_RENDEZVOUS_ADDR"'
check "identity job: exit 0" [ "$RC" -eq 0 ]
for r in 0 1 2 3 4 5; do
    h=$((r / 2))
    iface=eth0
    [ $(((h + 1) % 2)) -eq 0 ] && iface=ens5
    want="[$r]<stdout>:id $r 6 $((r % 2)) $h ${ADDR[$h]} $r $((r % 2)) $h net $iface $iface ${ADDR[0]} $LAB_GATEWAY"
    check "rank $r: identity and the real interface ($iface)" grep -qxF "$want" "$TMP/out"
done
check "no decoy interface given to any rank" \
    bash -c "! grep -Eq 'net (lo|docker0|eth1) ' '$TMP/out'"

# --- a cross-host allreduce over the chosen network ---
# one host, not this one: its agent gets the loopback of a one-host job
# (it was taken for a host joining that job: every such job failed)
hvd -H "${ADDR[1]}:2" sh -c 'echo "rank $HOROVOD_RANK of $HOROVOD_SIZE on $HOROVOD_GLOO_IFACE"'
check "one other host: exit 0, both ranks on loopback" \
    [ "$RC" -eq 0 -a "$(grep -c 'of 2 on lo$' "$TMP/out")" -eq 2 ]

hvd -H "$H" --verbose "$CHECK"
check "allreduce across 3 hosts: exit 0" [ "$RC" -eq 0 ]
check "allreduce across 3 hosts: every rank passed" \
    [ "$(grep -c 'checks passed$' "$TMP/out")" -eq 6 ]
for i in 0 1 2; do
    check "verbose: host ${ADDR[$i]} chose its real interface" \
        grep -Eq "^hvdrun: ${ADDR[$i]}: agent ready, network (eth0|ens5) \\(${ADDR[$i]}\\)" "$TMP/err"
done

# --- stock PyTorch DDP (gloo, env://) across the hosts: its Gloo takes the
# --- interface hvdrun gives it, not the host name's address (hosts 2 and 3
# --- resolve their name to 127.0.1.1, host 1 to this machine's) ---
if /usr/bin/python3 -c 'import torch' 2>/dev/null; then
    hvd -H "$H" /usr/bin/python3 "$(dirname "$0")/ddp_check.py"
    check "DDP across 3 hosts: exit 0" [ "$RC" -eq 0 ]
    check "DDP across 3 hosts: every rank's weights equal" \
        [ "$(grep -c 'weights equal on 6 ranks$' "$TMP/out")" -eq 6 ]
    [ "$RC" -eq 0 ] || sed 's/^/  | /' "$TMP/err" | tail -5
    # --- Horovod's torch API (collective.torch) across the hosts: the
    # --- digits example reaches its accuracy; a rank killed on one host
    # --- makes every other rank raise, and hvdrun exits with its code ---
    export COLLECTIVE_LIB=${COLLECTIVE_LIB:?set COLLECTIVE_LIB}
    export COLLECTIVE_PY=$SRC/libcollective/python
    PYENV=(-x COLLECTIVE_LIB -x COLLECTIVE_PY)
    if [ -n "${SANITIZE_PRELOAD:-}" ]; then # an ASan libcollective in python3
        PYENV+=(-x "LD_PRELOAD=$SANITIZE_PRELOAD" -x ASAN_OPTIONS=detect_leaks=0)
    fi
    # (with ASan, 60 s was too short on a slow day: a bound, not a target)
    HVD_LIMIT=300 hvd -H "$H" "${PYENV[@]}" /usr/bin/python3 "$SRC/examples/pytorch_digits.py"
    check "pytorch_digits.py across 3 hosts reaches 97% (exit 0)" [ "$RC" -eq 0 ]
    grep "test accuracy .* on 6 ranks" "$TMP/out" || tail -5 "$TMP/err"
    hvd -H "${ADDR[0]}:1,${ADDR[1]}:2,${ADDR[2]}:1" "${PYENV[@]}" \
        /usr/bin/python3 "$SRC/tests/integration/torch_fail_check.py" KILL "$MARK"
    check "torch: rank 1 killed on ${ADDR[1]}: hvdrun exits 137" [ "$RC" -eq 137 ]
    check "torch: the 3 other ranks raised HorovodInternalError" \
        [ "$(grep -c 'raised HorovodInternalError' "$TMP/out")" -eq 3 ]
    check "torch: hvdrun names the killed rank and its host" \
        grep -q "rank 1 on ${ADDR[1]} was killed by signal 9" "$TMP/err"
    check "torch: nothing left on the lab hosts" lab_clean_within 10
    # --- the stall check across hosts: rank 0's warning reaches hvdrun's
    # --- stderr through hvdd (hvdrun-ssh's path), with the names rank 0
    # --- learns from the other hosts ---
    hvd -H "${ADDR[0]}:1,${ADDR[1]}:1" "${PYENV[@]}" -x HOROVOD_STALL_CHECK_TIME_SECONDS=1 \
        -x HOROVOD_GLOO_TIMEOUT_SECONDS=3 /usr/bin/python3 \
        "$SRC/tests/integration/stall_check.py"
    check "stall check across hosts: the warning" \
        grep -q '^hvdrun: One or more tensors were submitted to be reduced' "$TMP/err"
    check "stall check across hosts: the other host's names" \
        grep -qx 'hvdrun: 0: \[lonely.a, lonely.b\]' "$TMP/err"
else
    echo "skip: torch across hosts: /usr/bin/python3 has no torch (apt-get install python3-torch)"
fi

# --- the launch host's own slots beside other hosts (a local agent) ---
hvd -H "localhost:2,${ADDR[0]}:2" sh -c 'echo "net $HOROVOD_GLOO_IFACE $MASTER_ADDR"'
check "launch host plus one: exit 0" [ "$RC" -eq 0 ]
check "launch host plus one: the launch host uses the lab bridge" \
    grep -qxF "[0]<stdout>:net ${LAB}br $LAB_GATEWAY" "$TMP/out"
check "launch host plus one: the other host its eth0" \
    grep -qxF "[2]<stdout>:net eth0 $LAB_GATEWAY" "$TMP/out"
hvd -H "localhost:2,${ADDR[0]}:2" "$CHECK"
check "launch host plus one: allreduce passes on all 4 ranks" \
    [ "$RC" -eq 0 -a "$(grep -c 'checks passed$' "$TMP/out")" -eq 4 ]

hvd -H "$H" --hierarchical-allreduce "$CHECK"
check "hierarchical allreduce across 3 hosts: every rank passed" \
    [ "$RC" -eq 0 -a "$(grep -c 'checks passed$' "$TMP/out")" -eq 6 ]
# 2 hosts x 3 ranks: each host's step in shared memory, and without it
for shm in 1 0; do
    hvd -x COLL_SHM=$shm -H "${ADDR[0]}:3,${ADDR[1]}:3" --hierarchical-allreduce \
        --hierarchical-allgather "$CHECK"
    check "hierarchical allreduce and allgather on 2 hosts x 3, COLL_SHM=$shm: every rank passed" \
        [ "$RC" -eq 0 -a "$(grep -c 'checks passed$' "$TMP/out")" -eq 6 ]
    [ "$RC" -eq 0 ] || sed 's/^/  | /' "$TMP/err" | tail -5
done

# reducescatter takes two levels by itself with COLL_SHM on: host 1's
# link carries its local_rank 0's half of the 24 MB (about 12 MB), where
# the flat ring (COLL_SHM=0) sends 5/6 of it from rank 2 to rank 3 (20 MB)
tx_bytes() { ip netns exec "${LAB}h1" cat /sys/class/net/eth0/statistics/tx_bytes; }
for shm in 1 0; do
    before=$(tx_bytes)
    hvd -x COLL_SHM=$shm -H "${ADDR[0]}:3,${ADDR[1]}:3" "$CHECK" reducescatter 6000000
    sent=$(($(tx_bytes) - before))
    check "reducescatter of 24 MB on 2 hosts x 3, COLL_SHM=$shm: every rank right" \
        [ "$RC" -eq 0 -a "$(grep -c 'checks passed$' "$TMP/out")" -eq 6 ]
    [ "$RC" -eq 0 ] || sed 's/^/  | /' "$TMP/err" | tail -5
    echo "  | host 1 sent $sent bytes across"
    if [ "$shm" = 1 ]; then
        check "... two levels: host 1 sent 10-16 MB across" \
            [ "$RC" -eq 0 -a "$sent" -gt 10000000 -a "$sent" -lt 16000000 ]
    else
        check "... flat ring: host 1 sent over 18 MB across" \
            [ "$RC" -eq 0 -a "$sent" -gt 18000000 ]
    fi
done

# --- output: every line of every host, tagged, none mixed ---
hvd -H "$H" "$SPEW" 300
check "output job: exit 0" [ "$RC" -eq 0 ]
for r in 0 3 5; do
    check "rank $r: 300 stdout lines, tagged" \
        [ "$(grep -c "^\[$r\]<stdout>:R$r:" "$TMP/out")" -eq 300 ]
    check "rank $r: 300 stderr lines, tagged" \
        [ "$(grep -c "^\[$r\]<stderr>:R$r:" "$TMP/err")" -eq 300 ]
done

# a progress bar's last segment ends with '\r' alone: the agent's next
# line, its call to hvdd with that worker's end, follows on the same line
# and must still reach hvdrun as a call, not the terminal
# (the sleep: the bar goes out before the worker's end is reported)
hvd -H "$H" sh -c 'printf "step 1/2\rstep 2/2\r"; sleep 1'
check "a progress bar's last '\\r': exit 0" [ "$RC" -eq 0 ]
check "a progress bar's last '\\r': no agent's call on the terminal" \
    bash -c "! grep -q '@hvd' '$TMP/out'"
check "a progress bar's last '\\r': the bar is there" \
    grep -q "step 2/2" "$TMP/out"

# --- a failing remote rank stops every host ---
hvd -H "$H" sh -c "if [ \$HOROVOD_RANK = 3 ]; then echo boom >&2; exit 7; fi; exec sleep 60 # $MARK"
check "remote failure: hvdrun exits with the rank's code" [ "$RC" -eq 7 ]
check "remote failure: says which rank and host" \
    grep -q "rank 3 on ${ADDR[1]} exited with code 7" "$TMP/err"
check "remote failure: hvdd's view of every rank's end" \
    grep -q "^hvdrun: hvdd's view: 6 ranks; .*exit 7: rank 3 on ${ADDR[1]}" "$TMP/err"
check "remote failure: no process left on any host" lab_clean_within 10

# --- --max-restarts: a remote rank fails at the first start; every host
# --- starts again (a new hvdd, told the count) and the job passes ---
hvd -H "$H" --max-restarts 1 sh -c "if [ \$TORCHELASTIC_RESTART_COUNT = 0 ] && [ \$HOROVOD_RANK = 4 ]; then exit 6; fi
exec $CHECK"
check "restart across hosts: exit 0" [ "$RC" -eq 0 ]
check "restart across hosts: restarted once, after rank 4's exit 6" \
    [ "$(grep -c '^hvdrun: job failed (exit 6); starting it again (restart 1 of 1)$' "$TMP/err")" -eq 1 ]
check "restart across hosts: every rank passed at the second start" \
    [ "$(grep -c 'checks passed$' "$TMP/out")" -eq 6 ]
check "restart across hosts: nothing left on any host" lab_clean_within 10

# --- the job's failure is the first one, not the first host to end: rank 1
# --- fails at once beside a rank that takes the whole grace to stop; rank
# --- 0, alone on its host, would fail later with another code ---
hvd -H "${ADDR[0]}:1,${ADDR[1]}:2" --kill-grace 3 sh -c "case \$HOROVOD_RANK in
    1) sleep 0.3; exit 7 ;;
    2) trap '' TERM; sleep 30 ;;
    0) sleep 1.5; exit 3 ;; esac # $MARK"
check "first failure wins: hvdrun exits 7 (rank 1's), not 3" [ "$RC" -eq 7 ]
check "first failure wins: the failed host named" \
    grep -q "job failed on ${ADDR[1]}" "$TMP/err"
check "first failure wins: nothing left on any host" lab_clean_within 10

# --- daemons that remote ranks leave behind (setsid, output detached) are
# --- stopped with the job by each host's agent ---
rm -f daemon.*
hvd -H "$H" --kill-grace 1 sh -c 'f=$PWD/daemon.$HOROVOD_RANK
    setsid -f sh -c "echo \$\$ >$f.new; mv $f.new $f; exec sleep 115" </dev/null >/dev/null 2>&1
    for i in $(seq 500); do [ -s "$f" ] && break; sleep 0.01; done # '"$MARK"
check "remote daemons: exit 0" [ "$RC" -eq 0 ]
check "remote daemons: every rank started one" [ "$(ls daemon.* 2>/dev/null | wc -l)" -eq 6 ]
alive=0
for f in daemon.*; do kill -0 "$(cat "$f")" 2>/dev/null && alive=$((alive + 1)); done
check "remote daemons: none alive when hvdrun returns ($alive)" [ "$alive" -eq 0 ]
check "remote daemons: rank 3's named by its agent" \
    grep -q "stopping pid $(cat daemon.3) (.*), left running by rank 3" "$TMP/err"
check "remote daemons: nothing left on any host" lab_clean_within 10
for f in daemon.*; do kill -KILL "$(cat "$f")" 2>/dev/null; done

# --- SIGINT and SIGKILL of hvdrun mid-job ---
for sig in INT KILL; do
    start_job
    check "SIG$sig: every rank started" all_up
    kill -"$sig" "$pid"
    end_job
    if [ "$sig" = INT ]; then
        check "SIGINT: exit 130" [ "$RC" -eq 130 ]
    fi
    check "SIG$sig: no process left on any host" lab_clean_within 10
done

# --- a second SIGINT kills at once, even workers that ignore SIGTERM ---
# (sent once hvdrun has taken the first: two pending SIGINTs merge into
# one in its signalfd)
WORKER="trap '' TERM; echo up; sleep 60" start_job --kill-grace 60
check "second SIGINT: every rank started" all_up
kill -INT "$pid"
check "second SIGINT: the first taken, hvdrun says it is stopping" \
    within 10 grep -q "Interrupt: stopping the workers on 3 hosts" "$TMP/err"
kill -INT "$pid"
end_job
check "second SIGINT: exit 130, well before the 60 s grace" [ "$RC" -eq 130 ]
check "second SIGINT: says it kills" grep -q "Interrupt again: killing every worker" "$TMP/err"
check "second SIGINT: no process left on any host" lab_clean_within 10

# --- a hung agent: hvdd misses its heartbeats and stops the job ---
start_job --heartbeat-timeout 1.5 --kill-grace 1
agent=$(ip netns pids "${LAB}h2" | xargs -r ps -o pid=,comm= -p |
    awk '$2 == "hvdrun-agent" {print $1}')
check "hung agent: found the agent of host 2" [ -n "$agent" ]
kill -STOP $agent
end_job
kill -CONT $agent
check "hung agent: hvdrun exits 70" [ "$RC" -eq 70 ]
check "hung agent: names the host" \
    grep -q "the agent of host '${ADDR[1]}' sent no heartbeat" "$TMP/err"
check "hung agent: no process left once it resumes" lab_clean_within 10

# --- a killed agent: its workers die with it, the job stops ---
check "killed agent: every rank started" start_job
# the agent, not its guard (a child also called hvdrun-agent); looked
# for again for a while: a loaded machine may show the processes late
find_agent() {
    agent=$(ip netns pids "${LAB}h3" | xargs -r ps -o pid=,ppid=,comm= -p |
        awk '$3 == "hvdrun-agent" {pid[$1] = $2} END {
            for (p in pid) if (!(pid[p] in pid)) print p }')
    [ -n "$agent" ]
}
check "killed agent: found the agent of host 3" within 10 find_agent
kill -KILL $agent
end_job
check "killed agent: hvdrun exits 137" [ "$RC" -eq 137 ]
check "killed agent: names its host" grep -q "job failed on ${ADDR[2]}" "$TMP/err"
check "killed agent: no process left" lab_clean_within 10

# --- failures before any worker starts ---
started() { ls "$WORK" | grep -c '^started\.'; }
TOUCH="touch $WORK/started.\$HOROVOD_RANK"

# a missing working directory on one host (its parent hidden there by a
# mount in that sshd's mount namespace)
mkdir -p "$WORK/sub"
rm -f "$WORK"/started.*
RC=none
if nsenter -t "$(cat "$LABDIR/sshd2.pid")" -m mount -t tmpfs none "$WORK"; then
    cd "$WORK/sub" && hvd -H "$H" sh -c "$TOUCH"
    cd "$WORK" || exit 1
fi
nsenter -t "$(cat "$LABDIR/sshd2.pid")" -m umount "$WORK" 2>/dev/null
check "missing cwd: exit 69" [ "$RC" -eq 69 ]
check "missing cwd: names the host and the directory" \
    grep -q "^hvdrun: ${ADDR[1]}: cwd: the working directory '$WORK/sub' is missing" "$TMP/err"
check "missing cwd: no worker started anywhere" [ "$(started)" -eq 0 ]

# hvdrun missing on the other hosts
hvd -H "$H" --remote-hvdrun /nonexistent/hvdrun sh -c "$TOUCH"
check "remote hvdrun missing: exit 69" [ "$RC" -eq 69 ]
check "remote hvdrun missing: said" \
    grep -q "^hvdrun: 10\.$NET\.0\.1[123]: exec: hvdrun is missing there" "$TMP/err"
check "remote hvdrun missing: no worker started" [ "$(started)" -eq 0 ]

# a wrong key
mkdir -p "$TMP/wrong/.ssh"
cp "$HOME/.ssh/known_hosts" "$TMP/wrong/.ssh/"
ssh-keygen -q -t ed25519 -N '' -f "$TMP/wrong/.ssh/id_ed25519"
HOME=$TMP/wrong hvd -H "$H" sh -c "$TOUCH"
check "wrong key: exit 69" [ "$RC" -eq 69 ]
check "wrong key: auth step named for a host" \
    grep -q "^hvdrun: ${ADDR[0]}: auth: root@${ADDR[0]} refused every key" "$TMP/err"
check "wrong key: no worker started" [ "$(started)" -eq 0 ]

# an unknown host key: refused, then accepted and recorded on request
mkdir -p "$TMP/fresh/.ssh"
cp "$HOME/.ssh/id_ed25519" "$TMP/fresh/.ssh/"
HOME=$TMP/fresh hvd -H "$H" sh -c "$TOUCH"
check "unknown host key: exit 69" [ "$RC" -eq 69 ]
check "unknown host key: every host's key named with its fingerprint" \
    [ "$(grep -c "^hvdrun: 10\.$NET\.0\.1[123]: host key: host key SHA256:.* is not in" "$TMP/err")" -eq 3 ]
check "unknown host key: no worker started" [ "$(started)" -eq 0 ]
HOME=$TMP/fresh hvd -H "$H" --ssh-accept-new true
check "--ssh-accept-new: the job runs" [ "$RC" -eq 0 ]
check "--ssh-accept-new: every host recorded" \
    [ "$(grep -c 'ssh-ed25519' "$TMP/fresh/.ssh/known_hosts")" -eq 3 ]
HOME=$TMP/fresh hvd -H "$H" true
check "recorded keys are trusted next time" [ "$RC" -eq 0 ]

# hashed known_hosts entries (ssh-keygen -H) are understood
cp "$TMP/fresh/.ssh/known_hosts" "$TMP/fresh/.ssh/plain_hosts"
ssh-keygen -q -H -f "$TMP/fresh/.ssh/known_hosts" 2>/dev/null
HOME=$TMP/fresh hvd -H "$H" true
check "hashed known_hosts entries: the job runs" [ "$RC" -eq 0 ]
check "hashed known_hosts entries: really hashed" \
    [ "$(grep -c '^|1|' "$TMP/fresh/.ssh/known_hosts")" -eq 3 ]

# another port (-p): recorded as [host]:port (libssh2 also accepts a
# port-22 entry for the same host, unlike OpenSSH: start empty)
mkdir -p "$TMP/port/.ssh"
cp "$HOME/.ssh/id_ed25519" "$TMP/port/.ssh/"
HOME=$TMP/port hvd -H "${ADDR[0]}:1,${ADDR[1]}:1" -p 2222 sh -c "$TOUCH"
check "-p 2222: unknown host refused" [ "$RC" -eq 69 ]
check "-p 2222: no worker started" [ "$(started)" -eq 0 ]
HOME=$TMP/port hvd -H "${ADDR[0]}:1,${ADDR[1]}:1" -p 2222 --ssh-accept-new true
check "-p 2222 --ssh-accept-new: runs" [ "$RC" -eq 0 ]
check "-p 2222: recorded as [host]:2222" \
    grep -q "^\[${ADDR[0]}\]:2222 ssh-ed25519 " "$TMP/port/.ssh/known_hosts"
HOME=$TMP/port hvd -H "${ADDR[0]}:1,${ADDR[1]}:1" -p 2222 true
check "-p 2222: trusted next time" [ "$RC" -eq 0 ]

# the user's ssh config may accept new host keys, as ssh(1) would
mkdir -p "$TMP/cfg/.ssh"
cp "$HOME/.ssh/id_ed25519" "$TMP/cfg/.ssh/"
printf 'Host *\n    StrictHostKeyChecking accept-new\n' >"$TMP/cfg/.ssh/config"
HOME=$TMP/cfg hvd -H "${ADDR[0]}:1,${ADDR[1]}:1" true
check "ssh config accept-new: runs and records" \
    [ "$RC" -eq 0 -a "$(grep -c ssh-ed25519 "$TMP/cfg/.ssh/known_hosts")" -eq 2 ]

# ssh-agent instead of key files, and user@host
mkdir -p "$TMP/agent/.ssh"
cp "$HOME/.ssh/known_hosts" "$TMP/agent/.ssh/"
eval "$(ssh-agent -s)" >/dev/null
ssh-add -q "$HOME/.ssh/id_ed25519" 2>/dev/null
HOME=$TMP/agent hvd -H "root@${ADDR[0]}:1,root@${ADDR[1]}:1" sh -c 'echo "on $HOROVOD_HOSTNAME"'
check "ssh-agent, user@host: runs" [ "$RC" -eq 0 ]
check "user@host: the host name without the user" \
    grep -qxF "[1]<stdout>:on ${ADDR[1]}" "$TMP/out"
# an agent holding many keys: -i's own key is offered first, before
# sshd's MaxAuthTries (6) runs out
ssh-add -q -D 2>/dev/null
for k in 1 2 3 4 5 6 7; do
    ssh-keygen -q -t ed25519 -N '' -f "$TMP/agent/wrong$k"
    ssh-add -q "$TMP/agent/wrong$k" 2>/dev/null
done
ssh-add -q "$HOME/.ssh/id_ed25519" 2>/dev/null
HOME=$TMP/agent hvd -H "${ADDR[0]}:1,${ADDR[1]}:1" -i "$HOME/.ssh/id_ed25519" true
check "ssh-agent with 8 keys, -i: its key first, login works" [ "$RC" -eq 0 ]
ssh-agent -k >/dev/null
unset SSH_AUTH_SOCK SSH_AGENT_PID

# a changed host key: host 1's name with host 2's key
mkdir -p "$TMP/changed/.ssh"
cp "$HOME/.ssh/id_ed25519" "$TMP/changed/.ssh/"
{
    echo "${ADDR[0]} $(cut -d' ' -f1,2 "$LABDIR/hostkey2.pub")"
    grep -v "^${ADDR[0]} " "$HOME/.ssh/known_hosts"
} >"$TMP/changed/.ssh/known_hosts"
HOME=$TMP/changed hvd -H "$H" --ssh-accept-new sh -c "$TOUCH"
check "changed host key: exit 69, even with --ssh-accept-new" [ "$RC" -eq 69 ]
check "changed host key: named with the new fingerprint" \
    grep -q "^hvdrun: ${ADDR[0]}: host key: HOST KEY CHANGED: the host now shows SHA256:" "$TMP/err"
check "changed host key: no worker started" [ "$(started)" -eq 0 ]

# a host that never answers: --start-timeout says where each host was
hvd -H "$H,10.$NET.0.99:1" --start-timeout 1 sh -c "$TOUCH"
check "start timeout: exit 69" [ "$RC" -eq 69 ]
check "start timeout: names the host and its step" \
    grep -q "^hvdrun: not every host was ready within 1 s (--start-timeout):.* 10\.$NET\.0\.99 (connect)" "$TMP/err"
check "start timeout: no worker started" [ "$(started)" -eq 0 ]

# --check-ssh, then sshd stopped on one host
hvd -H "$H" --check-ssh
check "--check-ssh: exit 0" [ "$RC" -eq 0 ]
check "--check-ssh: every host ok" [ "$(grep -c ': ok$' "$TMP/out")" -eq 3 ]
hvd -H "$H" --check-ssh --remote-hvdrun /nonexistent/hvdrun
check "--check-ssh, no remote hvdrun: exit 69" [ "$RC" -eq 69 ]
check "--check-ssh, no remote hvdrun: every host named" \
    [ "$(grep -c 'exec: hvdrun is missing there' "$TMP/err")" -eq 3 ]
kill "$(cat "$LABDIR/sshd3.pid")"
sleep 0.3
hvd -H "$H" --check-ssh
check "--check-ssh, sshd stopped: exit 69" [ "$RC" -eq 69 ]
check "--check-ssh, sshd stopped: connect step named" \
    grep -q "^hvdrun: ${ADDR[2]}: connect: Connection refused" "$TMP/err"
hvd -H "$H" sh -c "$TOUCH"
check "sshd stopped: the job fails with 69" [ "$RC" -eq 69 ]
check "sshd stopped: no worker started on the other hosts" [ "$(started)" -eq 0 ]
check "every namespace clean at the end" lab_clean_within 10

finish
