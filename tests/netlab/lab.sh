# The lab for the netlab tests (sourced after integration/lib.sh): skips
# (77) without root, network namespaces or sshd; brings up LAB_UP_HOSTS
# (default 3) namespaced hosts with their own sshd, removed on exit; sets
# ADDR (their addresses), HOME (the lab's keys), WORK (the cwd) and
# lab_leftovers / lab_clean / lab_clean_within.
NETLAB="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/netlab.sh" # (tests may cd)
if [ "$(id -u)" -ne 0 ]; then
    echo "skip: network namespaces need root"
    exit 77
fi
if ! ip netns add "hvdprobe$$" 2>/dev/null; then
    echo "skip: cannot create network namespaces here"
    exit 77
fi
ip netns del "hvdprobe$$"
[ -x /usr/sbin/sshd ] || { echo "skip: no sshd (openssh-server)"; exit 77; }

LABDIR=$TMP/lab
mkdir -p "$LABDIR"
# (LAB_ON_EXIT: what a test built on the lab stops first, e.g. Slurm)
lab_exit() {
    [ -n "${LAB_ON_EXIT:-}" ] && $LAB_ON_EXIT
    bash "$NETLAB" down "$LABDIR"
    [ -n "${SSH_AGENT_PID:-}" ] && kill "$SSH_AGENT_PID"
    cleanup
}
trap lab_exit EXIT
bash "$NETLAB" up "$LABDIR" "${LAB_UP_HOSTS:-3}" || { echo "not ok - netlab up"; exit 1; }
. "$LABDIR/env"
read -r -a ADDR <<<"$LAB_ADDRS"
export HOME=$LABDIR/home
WORK=$TMP/work
mkdir -p "$WORK"
cd "$WORK" || exit 1

# Processes left in the lab's namespaces other than each listening sshd.
lab_leftovers() {
    local i n=0 ns pid keep
    for ((i = 1; i <= LAB_HOSTS; i++)); do
        ns=${LAB}h$i
        keep=$(cat "$LABDIR/sshd$i.pid" 2>/dev/null)
        for pid in $(ip netns pids "$ns" 2>/dev/null); do
            [ "$pid" = "$keep" ] || n=$((n + 1))
        done
    done
    echo "$n"
}
lab_clean() { [ "$(lab_leftovers)" -eq 0 ]; }
lab_clean_within() { within "$1" lab_clean; } # SECONDS

# lab_workers HOST: pids of the job's workers on lab host HOST (1-based):
# the processes of its namespace that have a rank
lab_workers() {
    local pid
    for pid in $(ip netns pids "${LAB}h$1" 2>/dev/null); do
        grep -qz '^HOROVOD_RANK=' "/proc/$pid/environ" 2>/dev/null && echo "$pid"
    done
}
