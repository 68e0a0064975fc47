#!/usr/bin/env bash
# GPUs under Slurm: each rank gets the GPUs Slurm gave the job on the
# rank's own node (CUDA_VISIBLE_DEVICES and the rest, as srun's step sets
# them there), whatever form the job asked for them in. A lab of 2 nodes
# of 3 CPUs, 4 GPUs and 2 NICs of Slurm's gres (slurm_lab.sh: Slurm
# numbers them, no device is behind them); another job holds GPU 0 of h2,
# so that the two nodes' GPUs differ. Needs root.
export LAB_UP_HOSTS=2 SLURM_LAB_CPUS=3 SLURM_LAB_GPUS=4 SLURM_LAB_NICS=2
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/lab.sh"
. "$(dirname "$0")/slurm_lab.sh"

slurm_lab_no_ssh
# each rank: "gpu RANK NODE CUDA ROCR STEP_GPUS GPUS_ON_NODE"
SHOW='echo "gpu $HOROVOD_RANK $SLURMD_NODENAME ${CUDA_VISIBLE_DEVICES-none} ${ROCR_VISIBLE_DEVICES-none} ${SLURM_STEP_GPUS-none} ${SLURM_GPUS_ON_NODE-none}"'
# rank_saw RANK LINE: rank RANK printed "gpu RANK LINE"
rank_saw() { grep -qxF "[$1]<stdout>:gpu $1 $2" "${3:-$TMP/out}"; }
# ranks_have WHAT NODE GPUS RANK...: each RANK of the job WHAT has
# NODE's GPUS in every variable that names them
ranks_have() {
    local what=$1 node=$2 gpus=$3 r n
    shift 3
    n=$(tr ',' '\n' <<<"$gpus" | wc -l)
    for r in "$@"; do
        check "$what: rank $r has $node's GPUs $gpus" \
            rank_saw "$r" "$node $gpus $gpus $gpus $n"
    done
}

# GPU 0 of h2 goes to another job (one CPU of h2 with it)
sbatch -J "$MARK-hold" -w h2 -n 1 --gres=gpu:1 -o /dev/null \
    --wrap 'exec sleep 300' >"$TMP/hold" 2>&1
HOLD=$(awk '{print $NF}' "$TMP/hold")
holding() { squeue -h -j "$HOLD" -t R -o %i 2>/dev/null | grep -q .; }
check "a job holds GPU 0 of h2" within 30 holding
# (the lab's end kills what is left in its namespaces; the hold goes first)
hold_down() { scancel "$HOLD" 2>/dev/null; slurm_lab_down; }
LAB_ON_EXIT=hold_down

# what a job may leave on a node: nothing but slurmd and the holding job
lab_clean_slurm() {
    local i pid n=0
    for ((i = 1; i <= LAB_HOSTS; i++)); do
        for pid in $(ip netns pids "${LAB}h$i" 2>/dev/null); do
            case "$(cat /proc/$pid/comm 2>/dev/null)" in
            slurmd | slurmstepd | sleep | "") ;;
            *) n=$((n + 1)) ;;
            esac
        done
    done
    [ "$n" -eq 0 ]
}

# --gpus-per-task: sbatch and salloc leave SLURM_GPUS_PER_TASK behind,
# which srun takes as its own: the agents' step of one task per node got
# one GPU a node
sal -N 2 --ntasks-per-node=2 --gpus-per-task=1 "$HVDRUN" sh -c "$SHOW"
check "--gpus-per-task=1: exit 0" [ "$RC" -eq 0 ]
say_err "$RC"
ranks_have --gpus-per-task=1 h1 0,1 0 1
ranks_have --gpus-per-task=1 h2 1,2 2 3
# (hvdrun asks scontrol and waits for it: SIGCHLD ignored by whoever
# started hvdrun must not lose that wait)
sal -N 2 --ntasks-per-node=2 --gpus-per-task=1 env --ignore-signal=CHLD \
    "$HVDRUN" sh -c "$SHOW"
check "--gpus-per-task=1, SIGCHLD ignored: exit 0, h2's ranks have 1,2" \
    [ "$RC" -eq 0 -a "$(grep -c '<stdout>:gpu [23] h2 1,2 ' "$TMP/out")" -eq 2 ]
say_err "$RC"
sal -N 2 --ntasks-per-node=2 --gpus-per-task=1 "$HVDRUN" --dry-run true
check "--gpus-per-task=1, dry run: the step asks for each node's 2 GPUs" \
    grep -q '^agents: .* --export=ALL --gres=gpu:2 hvdrun-srun-agent$' "$TMP/out"

# the job's other gres stay with the step that names its GPUs (a step
# given --gres gets only what it names): each rank's step has its
# node's nic beside its GPUs
STEP='scontrol show step "$SLURM_JOB_ID.$SLURM_STEP_ID" | sed -n "s/^ *TresPerNode=/tres $HOROVOD_RANK /p"'
sal -N 2 --ntasks-per-node=2 --gpus-per-task=1 --gres=nic:1 "$HVDRUN" \
    sh -c "$STEP"
check "--gres=nic:1 --gpus-per-task=1: exit 0" [ "$RC" -eq 0 ]
for r in 0 1 2 3; do
    check "--gres=nic:1 --gpus-per-task=1: rank $r's step has a nic" \
        grep -qxF "[$r]<stdout>:tres $r gres:gpu:2,gres:nic:1" "$TMP/out"
done
say_err "$RC"
sal -N 2 --ntasks-per-node=2 --gpus-per-task=1 --gres=nic:1 "$HVDRUN" \
    --dry-run true
check "--gres=nic:1 --gpus-per-task=1, dry run: the step asks for both" \
    grep -q ' --gres=gpu:2,nic:1 hvdrun-srun-agent$' "$TMP/out"

# the launcher's own GPU variables (salloc's shell runs on the launch
# host here, as on a login node: Slurm gave it no GPUs) give way to each
# node's where Slurm gave the node's agent GPUs, unless -x sets them
sal -N 2 --ntasks-per-node=2 --gpus-per-task=1 env ROCR_VISIBLE_DEVICES=7 \
    ZE_AFFINITY_MASK=7 "$HVDRUN" \
    sh -c "$SHOW; echo \"ze \$HOROVOD_RANK \${ZE_AFFINITY_MASK-none}\""
check "launcher's ROCR_VISIBLE_DEVICES=7: exit 0" [ "$RC" -eq 0 ]
say_err "$RC"
ranks_have "launcher's ROCR_VISIBLE_DEVICES=7" h1 0,1 0 1
ranks_have "launcher's ROCR_VISIBLE_DEVICES=7" h2 1,2 2 3
check "launcher's ZE_AFFINITY_MASK=7: each rank has its node's" \
    [ "$(grep -c -e '^\[[01]\]<stdout>:ze [01] 0,1$' \
        -e '^\[[23]\]<stdout>:ze [23] 1,2$' "$TMP/out")" -eq 4 ]
sal -N 2 --ntasks-per-node=2 --gpus-per-task=1 env ROCR_VISIBLE_DEVICES=7 \
    "$HVDRUN" -x ROCR_VISIBLE_DEVICES sh -c "$SHOW"
check "-x ROCR_VISIBLE_DEVICES (7 on the launcher): every rank has 7" \
    [ "$(grep -c '^\[[0-3]\]<stdout>:gpu [0-3] h[12] [0-9,]* 7 ' "$TMP/out")" -eq 4 ]

# -x wins on every node
sal -N 2 --ntasks-per-node=2 --gpus-per-task=1 "$HVDRUN" \
    -x CUDA_VISIBLE_DEVICES=3 sh -c "$SHOW"
check "-x CUDA_VISIBLE_DEVICES=3: exit 0" [ "$RC" -eq 0 ]
check "-x CUDA_VISIBLE_DEVICES=3: every rank has 3" \
    [ "$(grep -c '^\[[0-3]\]<stdout>:gpu [0-3] h[12] 3 ' "$TMP/out")" -eq 4 ]

# --gpus (a count for the whole job): srun took SLURM_GPUS for its own
# step of one task a node and could not make it ("Insufficient GRES").
# On one node: the step asks for that node's GPUs
sal -N 1 -w h1 -n 2 --gpus=2 "$HVDRUN" sh -c "$SHOW"
check "--gpus=2 on h1: exit 0" [ "$RC" -eq 0 ]
say_err "$RC"
ranks_have "--gpus=2 on h1" h1 0,1 0 1
# On two nodes Slurm may split them unevenly (3 and 1 here), and one step
# cannot ask for each node's own: hvdrun says so in one line and starts
# nothing; where they came out even, every rank has its node's
sal -N 2 -n 4 --gpus=4 "$HVDRUN" sh -c "$SHOW"
node_gpus_agree() {
    awk -F'<stdout>:' '/<stdout>:gpu / {
            split($2, f, " "); n = split(f[4], g, ",")
            if (f[4] == "none" || n != f[7] || f[4] != f[6]) bad++
            if (f[3] == "h2" && f[4] ~ /(^|,)0(,|$)/) bad++
            seen++
        } END { exit !(seen == 4 && bad == 0) }' "$TMP/out"
}
uneven_said() {
    [ "$RC" -eq 69 ] && ! grep -q '<stdout>' "$TMP/out" &&
        [ "$(grep -c "^hvdrun: srun: the job's GPUs differ by node (h1 has [0-9], h2 [0-9]), and one step cannot take each node's own: ask for GPUs per node (--gpus-per-node=N or --gres=gpu:N)$" "$TMP/err")" -eq 1 ]
}
if grep -q "GPUs differ by node" "$TMP/err"; then
    check "--gpus=4 on 2 nodes, split unevenly: exit 69, said once, no rank ran" uneven_said
else
    check "--gpus=4 on 2 nodes: exit 0" [ "$RC" -eq 0 ]
    check "--gpus=4 on 2 nodes: each rank has its node's GPUs" node_gpus_agree
fi
say_err "$RC"
check "after the GPU jobs: nothing left on any node" within 20 lab_clean_slurm

# sbatch on h2 alone: hvdrun runs the job on its own node, whose GPUs
# the batch step was given
cat >"$TMP/job.sh" <<JOB
#!/bin/sh
exec "$HVDRUN" -np 2 sh -c '$SHOW'
JOB
timeout -k 5 120 sbatch --wait -J "$MARK" -w h2 -N 1 -n 2 --gres=gpu:2 \
    -o "$TMP/batch.out" "$TMP/job.sh" >/dev/null 2>"$TMP/err"
RC=$?
check "sbatch on h2, --gres=gpu:2: exit 0" [ "$RC" -eq 0 ]
for r in 0 1; do
    check "sbatch on h2: rank $r has h2's GPUs 1,2" \
        grep -qE "^\[$r\]<stdout>:gpu $r h2 1,2 1,2 [^ ]+ 2$" "$TMP/batch.out"
done
[ "$RC" -eq 0 ] || tail -n 5 "$TMP/batch.out" | sed 's/^/  | /'

finish
