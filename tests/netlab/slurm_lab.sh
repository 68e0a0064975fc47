# A real Slurm on the lab's hosts (sourced after lab.sh): one munged and
# one slurmctld here (on the lab's gateway address), one slurmd per lab
# host in its namespace, under its own NodeName (h1, h2, ...), from a
# generated slurm.conf. Skips (77) when Slurm is not installed or does
# not start here. Stops what it started, by pid, before the lab goes.
# Each node has SLURM_LAB_CPUS CPUs (default 2) and, with SLURM_LAB_GPUS=N,
# N GPUs of Slurm's gres (no GPU behind them: their files are character
# devices of the lab's, copies of /dev/null, as Slurm numbers only
# devices; no cgroup constrains a task here). Sets SLURM_CONF (exported) and NODES (h1 h2 ...).
for b in munged slurmctld slurmd salloc sbatch srun; do
    command -v "$b" >/dev/null 2>&1 || PATH=$PATH:/usr/sbin
    command -v "$b" >/dev/null 2>&1 ||
        { echo "skip: no $b (Debian: munge, slurmctld, slurmd, slurm-client)"; exit 77; }
done
SL=$LABDIR/slurm
mkdir -p "$SL/state" "$SL/log"
chmod 700 "$SL"
SLURM_PIDS=()
slurm_lab_down() {
    local p
    for p in "${SLURM_PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
    for p in "${SLURM_PIDS[@]}"; do
        for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$p" 2>/dev/null
    done
}
LAB_ON_EXIT=slurm_lab_down

# a port no socket here uses, for slurmctld: below the ephemeral range (a
# port of it may be any connection's own end, and slurmctld's bind then
# fails: "Address already in use", seen once in a benchmark's lab)
slurm_port() {
    local p low
    low=$(awk '{print $1}' /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null)
    [ "${low:-0}" -gt 20000 ] 2>/dev/null || low=32768
    for _ in $(seq 50); do
        p=$((20000 + RANDOM % (low - 20000)))
        ss -tanH "sport = :$p" 2>/dev/null | grep -q . || { echo "$p"; return; }
    done
    echo 26817
}
# cgroup v1 where /sys/fs/cgroup is a tmpfs of v1 hierarchies, else v2
slurm_cgroup() {
    if [ "$(stat -fc %T /sys/fs/cgroup 2>/dev/null)" = cgroup2fs ]; then
        printf 'CgroupPlugin=cgroup/v2\nIgnoreSystemd=yes\n'
    else
        printf 'CgroupPlugin=cgroup/v1\nCgroupMountpoint=/sys/fs/cgroup\n'
    fi
}

head -c 1024 /dev/urandom >"$SL/munge.key"
chmod 600 "$SL/munge.key"
munged -F -f --socket="$SL/munge.sock" --key-file="$SL/munge.key" \
    --log-file="$SL/log/munged.log" --pid-file="$SL/munged.pid" \
    --seed-file="$SL/munge.seed" >"$SL/log/munged.out" 2>&1 &
SLURM_PIDS+=($!)
NODES=()
for ((i = 1; i <= LAB_HOSTS; i++)); do NODES+=("h$i"); done
{
    echo "ClusterName=hvdlab"
    echo "SlurmctldHost=$(hostname -s)($LAB_GATEWAY)"
    echo "SlurmctldPort=$(slurm_port)"
    echo "SlurmdPort=6818"
    echo "SlurmUser=root"
    echo "SlurmdUser=root"
    echo "AuthType=auth/munge"
    echo "CredType=cred/munge"
    echo "AuthInfo=socket=$SL/munge.sock"
    echo "StateSaveLocation=$SL/state"
    echo "SlurmdSpoolDir=$SL/spool.%n"
    echo "SlurmctldPidFile=$SL/slurmctld.pid"
    echo "SlurmdPidFile=$SL/slurmd.%n.pid"
    echo "SlurmctldLogFile=$SL/log/slurmctld.log"
    echo "SlurmdLogFile=$SL/log/slurmd.%n.log"
    echo "MailProg=/bin/true"
    echo "ProctrackType=proctrack/linuxproc"
    echo "TaskPlugin=task/none"
    echo "SelectType=select/cons_tres"
    echo "SelectTypeParameters=CR_CPU"
    echo "SchedulerType=sched/builtin"
    echo "ReturnToService=2"
    echo "MpiDefault=none"
    echo "SwitchType=switch/none"
    echo "JobAcctGatherType=jobacct_gather/none"
    echo "AccountingStorageType=accounting_storage/none"
    echo "JobCompType=jobcomp/none"
    echo "SlurmdParameters=config_overrides"
    echo "KillWait=5"
    gres=
    if [ "${SLURM_LAB_GPUS:-0}" -gt 0 ]; then
        echo "GresTypes=gpu${SLURM_LAB_NICS:+,nic}"
        gres=" Gres=gpu:$SLURM_LAB_GPUS${SLURM_LAB_NICS:+,nic:$SLURM_LAB_NICS}"
    fi
    for ((i = 1; i <= LAB_HOSTS; i++)); do
        echo "NodeName=h$i NodeAddr=${ADDR[$((i - 1))]} CPUs=${SLURM_LAB_CPUS:-2}$gres State=UNKNOWN"
    done
    echo "PartitionName=lab Nodes=ALL Default=YES MaxTime=INFINITE State=UP"
} >"$SL/slurm.conf"
slurm_cgroup >"$SL/cgroup.conf"
if [ "${SLURM_LAB_GPUS:-0}" -gt 0 ]; then
    for ((g = 0; g < SLURM_LAB_GPUS; g++)); do
        mknod "$SL/gpu$g" c 1 3 2>/dev/null ||
            { echo "skip: cannot make the lab's GPU device files (mknod)"; exit 77; }
    done
    echo "Name=gpu File=$SL/gpu[0-$((SLURM_LAB_GPUS - 1))]" >"$SL/gres.conf"
    [ -z "${SLURM_LAB_NICS:-}" ] || echo "Name=nic Count=$SLURM_LAB_NICS" >>"$SL/gres.conf"
fi
export SLURM_CONF=$SL/slurm.conf
for _ in $(seq 50); do [ -S "$SL/munge.sock" ] && break; sleep 0.1; done
slurmctld -D -i -f "$SLURM_CONF" >"$SL/log/slurmctld.out" 2>&1 &
SLURM_PIDS+=($!)
for ((i = 1; i <= LAB_HOSTS; i++)); do
    mkdir -p "$SL/spool.h$i"
    ip netns exec "${LAB}h$i" slurmd -D -f "$SLURM_CONF" -N "h$i" \
        >"$SL/log/slurmd.h$i.out" 2>&1 &
    SLURM_PIDS+=($!)
done
nodes_idle() { [ "$(timeout 5 sinfo -h -N -t idle -o %N 2>/dev/null | sort -u | wc -l)" -eq "$LAB_HOSTS" ]; }
if ! within 30 nodes_idle; then
    echo "skip: Slurm did not start here: $(tail -n 1 "$SL"/log/slurmd.h1.log \
        "$SL"/log/slurmd.h1.out "$SL/log/slurmctld.out" 2>/dev/null | grep -v '^==' | grep . | tail -n 1)"
    exit 77
fi

# For the tests on it: no SSH anywhere (a job must go through Slurm), and
# sal ARGS...: salloc ARGS, bounded, its output in $TMP/out and $TMP/err
# and its exit code in RC; say_err RC shows the end of $TMP/err unless RC
# is 0.
slurm_lab_no_ssh() {
    local i
    for ((i = 1; i <= LAB_HOSTS; i++)); do
        kill "$(cat "$LABDIR/sshd$i.pid")" 2>/dev/null
    done
}
sal() {
    timeout -k 5 90 salloc -J "$MARK" "$@" >"$TMP/out" 2>"$TMP/err"
    RC=$?
}
say_err() { [ "$1" -eq 0 ] || tail -n 5 "$TMP/err" | sed 's/^/  | /'; }
