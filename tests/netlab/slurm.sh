#!/usr/bin/env bash
# hvdrun inside a real Slurm allocation (munged, slurmctld, one slurmd per
# namespaced host; slurm_lab.sh), with every host's sshd stopped: jobs go
# through salloc and sbatch as users run them; the hosts come from the
# allocation, the agents from one srun step. Identity and the real NIC on
# every rank, an allreduce across nodes, a failing rank, part of an
# allocation, an elastic job losing a node, SIGINT, SIGTERM and SIGKILL of hvdrun, scancel, a stranger
# on the agents' port, the token in no argv; nothing left on any node
# after each. Needs root.
. "$(dirname "$0")/../integration/lib.sh"
CHECK=${COLL_CHECK:?set COLL_CHECK to the coll_check program}
ELASTIC=${ELASTIC_CHECK:?set ELASTIC_CHECK to the elastic_check program}
. "$(dirname "$0")/lab.sh"
. "$(dirname "$0")/slurm_lab.sh"

slurm_lab_no_ssh

# what a job may leave on a node: nothing of it (slurmd stays)
job_leftovers() {
    local i pid n=0
    for ((i = 1; i <= LAB_HOSTS; i++)); do
        for pid in $(ip netns pids "${LAB}h$i" 2>/dev/null); do
            case "$(cat /proc/$pid/comm 2>/dev/null)" in
            slurmd | "") ;;
            *) n=$((n + 1)) ;;
            esac
        done
    done
    echo "$n"
}
nodes_clean() { [ "$(job_leftovers)" -eq 0 ] && [ "$(leftovers)" -eq 0 ]; }

# --- the plan from the allocation ---
OLDPWD=/x sal -N 3 -n 6 "$HVDRUN" --dry-run true
check "dry run: exit 0" [ "$RC" -eq 0 ]
check "dry run: 6 ranks, 2 on each node, in Slurm's order" \
    [ "$(awk '$1 ~ /^[0-9]+$/ {print $2}' "$TMP/out" | tr '\n' ' ')" = "h1 h1 h2 h2 h3 h3 " ]
check "dry run: one srun step on the whole allocation" \
    grep -q '^agents: one srun step, hosts from the Slurm allocation: srun --nodes=3 --ntasks=3 --ntasks-per-node=1 --kill-on-bad-exit --mpi=none --cpu-bind=none --input=none --whole --overlap --export=ALL hvdrun-srun-agent$' "$TMP/out"
check "dry run: what of hvdrun's environment stays behind" \
    grep -qE '^not passed on: (.* )?OLDPWD( |$)' "$TMP/out"
check "dry run: each node's own Slurm variables, named" \
    grep -q "^each node's own, from its agent's step (unless -x sets them): SLURMD_NODENAME SLURM_NODEID .*; with GPUs from Slurm: CUDA_VISIBLE_DEVICES " "$TMP/out"
sal -N 3 -n 6 "$HVDRUN" --dry-run -np 3 true
check "dry run, -np 3: the first two nodes, named to srun" \
    grep -q 'srun --nodes=2 --ntasks=2 .* --nodelist=h1,h2 hvdrun-srun-agent$' "$TMP/out"

sal -N 3 -n 6 "$HVDRUN" --dry-run --remote-hvdrun /opt/x/hvdrun true
check "dry run, --remote-hvdrun: srun runs it as PATH --agent-srun" \
    grep -q -- '--overlap --export=ALL /opt/x/hvdrun --agent-srun$' "$TMP/out"
sal -N 3 -n 3 "$HVDRUN" --remote-hvdrun "$HVDRUN" true
check "--remote-hvdrun: the nodes' hvdrun --agent-srun starts the agents, exit 0" \
    [ "$RC" -eq 0 ]
say_err "$RC"

# --- identity and network on every rank, over srun alone ---
# (SLURMD_NODENAME and SLURM_NODEID are the rank's node's, not the
# launcher's; SLURM_PROCID, of hvdrun's own task where it has one, no
# rank's)
sal -N 3 -n 6 "$HVDRUN" sh -c 'echo "id $HOROVOD_RANK $HOROVOD_SIZE $HOROVOD_LOCAL_RANK $HOROVOD_CROSS_RANK $HOROVOD_GLOO_IFACE $(ip -4 -o addr show dev $HOROVOD_GLOO_IFACE | awk "{print \$4}") $SLURMD_NODENAME $SLURM_NODEID ${SLURM_PROCID-none}"'
check "identity job: exit 0" [ "$RC" -eq 0 ]
say_err "$RC"
for r in 0 1 2 3 4 5; do
    h=$((r / 2))
    iface=eth0
    [ $(((h + 1) % 2)) -eq 0 ] && iface=ens5
    check "rank $r: on node h$((h + 1)), the real interface ($iface), its Slurm node" \
        grep -qxF "[$r]<stdout>:id $r 6 $((r % 2)) $h $iface ${ADDR[$h]}/24 h$((h + 1)) $h none" "$TMP/out"
done
check "identity job: nothing left on any node" within 10 nodes_clean

# --- a collective across the nodes ---
sal -N 3 -n 6 "$HVDRUN" "$CHECK"
check "allreduce and the rest across 3 nodes: every rank passed" \
    [ "$RC" -eq 0 -a "$(grep -c 'checks passed$' "$TMP/out")" -eq 6 ]
say_err "$RC"

# --- inside a job step (srun --pty bash): the allocation is the step's ---
# (Slurm sets the step's SLURM_NNODES and SLURM_TASKS_PER_NODE there, and
# the job's SLURM_NODELIST: hvdrun refused the mismatch)
sal -N 3 -n 6 srun -N 1 -n 1 -w h3 "$HVDRUN" sh -c 'echo "on $SLURMD_NODENAME of $HOROVOD_SIZE"'
check "inside a 1-node step: the step's node and task" \
    [ "$RC" -eq 0 -a "$(grep -c '^\[0\]<stdout>:on h3 of 1$' "$TMP/out")" -eq 1 ]
say_err "$RC"
check "inside a step: nothing left on any node" within 10 nodes_clean

# --- hvdrun started by srun once per task: refused, no job runs ---
# (each copy started a whole job of its own: three jobs of three ranks)
sal -N 3 -n 3 srun -N 3 -n 3 "$HVDRUN" sh -c "echo ran >>'$TMP/copies'"
check "srun -n 3 hvdrun: refused (exit 64), said once, naming the copies" \
    [ "$RC" -eq 64 -a "$(grep -c 'srun started 3 copies of hvdrun' "$TMP/err")" -eq 1 ]
check "srun -n 3 hvdrun: no rank ran" [ ! -e "$TMP/copies" ]
say_err "$RC"
check "srun -n 3 hvdrun: nothing left on any node" within 10 nodes_clean
# a copy per node that runs a job on its own node alone is a job per node
cat >"$TMP/per_node.sh" <<EOF
#!/bin/sh
addr=\$(ip -4 -o addr show scope global | awk '{split(\$4, a, "/"); print a[1]; exit}')
exec "$HVDRUN" -H "\$addr:2" sh -c 'echo "job on \$SLURMD_NODENAME rank \$HOROVOD_RANK of \$HOROVOD_SIZE"'
EOF
chmod +x "$TMP/per_node.sh"
sal -N 2 -n 2 srun -N 2 -n 2 "$TMP/per_node.sh"
check "srun -N 2 -n 2, each hvdrun -H its own address: a job per node, exit 0" \
    [ "$RC" -eq 0 -a "$(grep -c 'job on h1 rank [01] of 2$' "$TMP/out")" -eq 2 -a \
      "$(grep -c 'job on h2 rank [01] of 2$' "$TMP/out")" -eq 2 ]
say_err "$RC"
# srun --pty runs every task, task 0's in the terminal: one job, whose
# code is srun's (the other tasks, whose output goes nowhere, end 0)
if command -v script >/dev/null; then
    sal -N 3 -n 3 script -qec "srun -N 3 -n 3 --pty $HVDRUN sh -c 'echo ranks \$HOROVOD_SIZE'" /dev/null
    check "srun -n 3 --pty hvdrun: one job of 3 ranks, exit 0" \
        [ "$RC" -eq 0 -a "$(grep -c 'ranks 3' "$TMP/out")" -eq 3 ]
    say_err "$RC"
    check "srun --pty hvdrun: nothing left on any node" within 10 nodes_clean
fi

# --- an allocation of one node, from this host (a login node's salloc) ---
# (its one agent was taken for a host joining a loopback job: every
# job of one node failed)
sal -N 1 -n 2 "$HVDRUN" sh -c 'ip -4 -o addr show | grep -q " $0/" && echo "on h1 rank $HOROVOD_RANK of $HOROVOD_SIZE"' "${ADDR[0]}"
check "one node: exit 0, both ranks on h1" \
    [ "$RC" -eq 0 -a "$(grep -c 'on h1 rank [01] of 2$' "$TMP/out")" -eq 2 ]
say_err "$RC"
check "one node: nothing left on any node" within 10 nodes_clean

# --- part of an allocation: 3 ranks of 6 tasks, the third node idle ---
sal -N 3 -n 6 "$HVDRUN" -np 3 sh -c 'echo "on $(ip -4 -o addr show dev $HOROVOD_GLOO_IFACE | awk "{print \$4}")"'
check "-np 3 of 6: exit 0" [ "$RC" -eq 0 ]
check "-np 3 of 6: 3 ranks, none on the third node" \
    [ "$(grep -c ':on ' "$TMP/out")" -eq 3 -a "$(grep -c "${ADDR[2]}/" "$TMP/out")" -eq 0 ]

# --- a failing rank stops every node, its code is hvdrun's ---
sal -N 3 -n 6 "$HVDRUN" sh -c "if [ \$HOROVOD_RANK = 3 ]; then echo boom >&2; exit 7; fi; exec sleep 60 # $MARK"
check "failing rank: salloc and hvdrun exit 7" [ "$RC" -eq 7 ]
check "failing rank: says which rank and node" \
    grep -q "rank 3 on h2 exited with code 7" "$TMP/err"
check "failing rank: nothing left on any node" within 10 nodes_clean

# --- elastic under srun: a node's rank fails, the others go on ---
sal -N 3 -n 6 "$HVDRUN" --min-np 2 -x ELASTIC_CHECK_DIE_HOST=h2 \
    -x ELASTIC_CHECK_DIE_STEP=20 "$ELASTIC" 1 "$MARK"
check "elastic: a rank of h2 fails, the job goes on and passes" [ "$RC" -eq 0 ]
check "elastic: said, naming the node and the rest" \
    grep -q "^hvdrun: host h2 failed (rank 2 exit 3); continuing with 4 ranks on h1,h3\$" "$TMP/err"
check "elastic: 4 ranks right in round 1" \
    [ "$(grep -c 'of 4 in round 1 (fresh 0): right' "$TMP/out")" -eq 4 ]
check "elastic: nothing left on any node" within 10 nodes_clean

# --- a job held up: a stranger on the agents' port, the token in no
# --- argv, then SIGKILL of hvdrun ---
salloc -J "$MARK" -N 3 -n 6 "$HVDRUN" sh -c "echo up; exec sleep 60 # $MARK" \
    >"$TMP/out" 2>"$TMP/err" &
SALLOC=$!
all_up() { [ "$(grep -c ':up$' "$TMP/out")" -eq 6 ]; }
check "held job: every rank up" within 30 all_up
hvdrun_pid=$(pgrep -P "$SALLOC" | head -n 1)
srun_pid=$(pgrep -P "$hvdrun_pid" -x srun | head -n 1)
link=$(tr '\0' '\n' <"/proc/$srun_pid/environ" 2>/dev/null | sed -n 's/^HVDRUN_SRUN_LINK=//p')
port=${link%% *}
check "held job: srun has the agents' port in its environment" [ -n "$port" ]
ip netns exec "${LAB}h1" timeout 5 bash -c "exec 3<>/dev/tcp/$LAB_GATEWAY/$port; read -r -t 3 hello <&3
    echo \"h1 0 $(printf '%032d' 0) $(printf '%064d' 0)\" >&3; read -r -t 3 x <&3" 2>/dev/null
refused() { grep -q "refused a connection from ${ADDR[0]} to the agents' port: it does not know the job's secret" "$TMP/err"; }
check "a stranger on the agents' port: refused, named" within 5 refused
worker=$(for ((i = 1; i <= LAB_HOSTS; i++)); do ip netns pids "${LAB}h$i"; done |
    while read -r p; do grep -qz '^HOROVOD_RANK=0$' "/proc/$p/environ" 2>/dev/null && echo "$p"; done | head -n 1)
token=$(tr '\0' '\n' <"/proc/$worker/environ" 2>/dev/null | sed -n 's/^HVDD_TOKEN=//p')
check "held job: rank 0 has the job's token" [ ${#token} -ge 32 ]
# and the step's secret, from srun's environment
secret=$(tr '\0' '\n' <"/proc/$srun_pid/environ" 2>/dev/null | sed -n 's/^HVDRUN_SRUN_SECRET=//p')
check "held job: srun has the step's secret, not the job token" \
    [ ${#secret} -ge 32 -a "$secret" != "$token" ]
# (from a file: grep's own argv must not hold them)
printf '%s\n%s\n' "$token" "$secret" >"$TMP/token"
in_argv=$(grep -l -a -F -f "$TMP/token" /proc/[0-9]*/cmdline 2>/dev/null | wc -l)
check "neither the token nor the secret in any process's argv ($in_argv)" [ "$in_argv" -eq 0 ]
# the agent runs in hvdrun-srun-agent's own process (its name cut to 15)
agent=$(ip netns pids "${LAB}h1" | xargs -r ps -o pid=,comm= -p |
    awk '$2 == "hvdrun-srun-age" {print $1; exit}')
no_secret() {
    [ -r "/proc/$1/environ" ] && ! grep -qz '^HVDRUN_SRUN_SECRET=' "/proc/$1/environ"
}
no_secrets() { no_secret "$agent" && no_secret "$worker"; }
check "the srun link's secret in neither the agent's environment nor a worker's" \
    no_secrets
# hvdrun runs a Slurm job's fleet itself: no hvdrun-ssh, no libssh2
check "held job: hvdrun runs the fleet itself (no hvdrun-ssh)" \
    [ "$(cat "/proc/$hvdrun_pid/comm")" = hvdrun ]
no_libssh2() { ! grep -q 'libssh2' "/proc/$hvdrun_pid/maps"; }
check "held job: hvdrun has not loaded libssh2" no_libssh2
# the agents' listener is not inherited by what hvdrun starts
holders=$(ss -ltnpH "sport = :$port" 2>/dev/null | grep -o 'pid=[0-9]*' | sort -u | tr '\n' ' ')
check "the agents' port is held by hvdrun alone ($holders)" \
    [ "$holders" = "pid=$hvdrun_pid " ]
kill -KILL "$hvdrun_pid"
check "SIGKILL of hvdrun: nothing left on any node" within 20 nodes_clean
wait "$SALLOC"

# --- SIGINT and SIGTERM of hvdrun: it stops every node itself ---
for sig in INT TERM; do
    salloc -J "$MARK" -N 3 -n 6 "$HVDRUN" sh -c "echo up; exec sleep 60 # $MARK" \
        >"$TMP/out" 2>"$TMP/err" &
    SALLOC=$!
    check "SIG$sig: every rank up" within 30 all_up
    kill -"$sig" "$(pgrep -P "$SALLOC" | head -n 1)"
    wait "$SALLOC"
    RC=$?
    want=$((128 + $(kill -l "$sig")))
    check "SIG$sig of hvdrun: salloc and hvdrun exit $want" [ "$RC" -eq "$want" ]
    check "SIG$sig of hvdrun: nothing left on any node" within 20 nodes_clean
done

# --- scancel: Slurm ends the step, hvdrun says so ---
salloc -J "$MARK" -N 3 -n 3 "$HVDRUN" sh -c "echo up; exec sleep 60 # $MARK" \
    >"$TMP/out" 2>"$TMP/err" &
SALLOC=$!
three_up() { [ "$(grep -c ':up$' "$TMP/out")" -eq 3 ]; }
check "scancel: every rank up" within 30 three_up
scancel -n "$MARK"
# salloc's own status is its command's: 143 from hvdrun
wait "$SALLOC"
RC=$?
check "scancel: hvdrun exits 143" [ "$RC" -eq 143 ]
check "scancel: says the Slurm job was cancelled" \
    grep -q "^hvdrun: the Slurm job was cancelled" "$TMP/err"
grep -q "^hvdrun: the Slurm job was cancelled" "$TMP/err" ||
    tail -n 8 "$TMP/err" | sed 's/^/  | /'
check "scancel: nothing left on any node" within 20 nodes_clean

# --- a Slurm job needs no hvdrun-ssh: hvdrun runs its fleet itself ---
mkdir -p "$TMP/alone"
cp "$HVDRUN" "$(dirname "$HVDRUN")/hvdrun-srun-agent" \
    "$(dirname "$HVDRUN")/hvdd" "$TMP/alone/"
sal -N 3 -n 6 "$TMP/alone/hvdrun" true
check "no hvdrun-ssh beside hvdrun: the Slurm job runs, exit 0" [ "$RC" -eq 0 ]
say_err "$RC"
alone_clean() {
    ! pgrep -f "$TMP/alone/hvdrun-srun-agent" >/dev/null && nodes_clean
}
check "no hvdrun-ssh beside hvdrun: nothing left on any node" \
    within 20 alone_clean
# srun runs hvdrun-srun-agent beside hvdrun: without it, hvdrun says so
# once, itself, and starts no srun
rm "$TMP/alone/hvdrun-srun-agent"
sal -N 3 -n 6 "$TMP/alone/hvdrun" true
check "no hvdrun-srun-agent beside hvdrun: exit 69" [ "$RC" -eq 69 ]
said_once_no_srun() {
    [ "$(grep -c "^hvdrun: cannot find 'hvdrun-srun-agent' beside hvdrun" "$TMP/err")" -eq 1 ] &&
        ! grep -q '^srun: ' "$TMP/err"
}
check "no hvdrun-srun-agent beside hvdrun: said once, before any srun" \
    said_once_no_srun
check "no hvdrun-srun-agent beside hvdrun: nothing left on any node" \
    within 20 nodes_clean

# hvdrun-ssh run by hand inside an allocation runs the job as well
sal -N 3 -n 6 "$(dirname "$HVDRUN")/hvdrun-ssh" true
check "hvdrun-ssh inside an allocation: the Slurm job runs, exit 0" [ "$RC" -eq 0 ]
say_err "$RC"

# --- sbatch: hvdrun in the batch script, on the allocation's first node ---
# (the batch script is task 0 of the batch step: its SLURM_PROCID and
# SLURMD_NODENAME reached every rank, on every node)
cat >"$TMP/job.sh" <<JOB
#!/bin/sh
#SBATCH -N 2 -n 4
"$HVDRUN" sh -c 'echo "slurm \$HOROVOD_RANK \$SLURMD_NODENAME \${SLURM_PROCID-none}"' || exit 1
exec "$HVDRUN" "$CHECK"
JOB
timeout -k 5 120 sbatch --wait -J "$MARK" -o "$TMP/batch.out" "$TMP/job.sh" >/dev/null 2>"$TMP/err"
RC=$?
check "sbatch: exit 0" [ "$RC" -eq 0 ]
check "sbatch: 4 ranks passed" [ "$(grep -c 'checks passed$' "$TMP/batch.out")" -eq 4 ]
check "sbatch: each rank has its node's SLURMD_NODENAME and no SLURM_PROCID" \
    [ "$(grep -c '^\[[01]\]<stdout>:slurm [01] h1 none$' "$TMP/batch.out")" -eq 2 -a \
      "$(grep -c '^\[[23]\]<stdout>:slurm [23] h2 none$' "$TMP/batch.out")" -eq 2 ]
[ "$RC" -eq 0 ] || tail -n 5 "$TMP/batch.out" | sed 's/^/  | /'
check "sbatch: nothing left on any node" within 20 nodes_clean

# sbatch --export=NONE leaves SLURM_EXPORT_ENV=NONE in the script, which
# srun takes as its own: hvdrun's port and secret must still reach the
# agents
timeout -k 5 120 sbatch --wait --export=NONE -J "$MARK" -o "$TMP/batch2.out" "$TMP/job.sh" >/dev/null 2>"$TMP/err"
RC=$?
check "sbatch --export=NONE: exit 0" [ "$RC" -eq 0 ]
check "sbatch --export=NONE: 4 ranks passed" [ "$(grep -c 'checks passed$' "$TMP/batch2.out")" -eq 4 ]
[ "$RC" -eq 0 ] || tail -n 5 "$TMP/batch2.out" | sed 's/^/  | /'
check "sbatch --export=NONE: nothing left on any node" within 20 nodes_clean

finish
