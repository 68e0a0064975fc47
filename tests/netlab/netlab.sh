#!/usr/bin/env bash
# The network lab: N test hosts as network namespaces on one bridge, each
# with its own sshd, and the decoys real clusters have.
#
#   netlab.sh up DIR N      builds hosts 1..N; writes DIR/env (source it)
#   netlab.sh down DIR      removes everything `up` made (idempotent)
#
# Host i is the namespace "$LAB"h$i with the address 10.$NET.0.(10+i)/24 on
# its real interface (called eth0 on odd hosts, ens5 on even ones: names
# differ between hosts), plus decoys:
#   lo         loopback
#   docker0    172.17.0.1/16 on every host (answers for itself only)
#   eth1       10.201.i.1/24, a network no other host has
# The launch side (this namespace) gets 10.$NET.0.1 on the bridge, so that
# the hosts reach hvdd. Each sshd listens on its host's address, port 22,
# (and 2222, which known_hosts does not list), with an Ed25519 host key made
# here, and accepts DIR/home/.ssh/id_ed25519.
# DIR/home is meant to be $HOME for the test's hvdrun: its known_hosts
# lists every host. Needs root (CAP_NET_ADMIN and sshd).
set -euo pipefail

cmd=${1:?usage: netlab.sh up DIR N | down DIR}
DIR=${2:?usage: netlab.sh up DIR N | down DIR}

down() {
    [ -f "$DIR/env" ] || return 0
    # shellcheck disable=SC1091
    . "$DIR/env"
    local i ns
    for ((i = 1; i <= LAB_HOSTS; i++)); do
        ns=${LAB}h$i
        ip netns pids "$ns" 2>/dev/null | xargs -r kill -KILL 2>/dev/null || true
        ip netns del "$ns" 2>/dev/null || true
    done
    ip link del "${LAB}br" 2>/dev/null || true
    # namespaces go away asynchronously: wait (bounded) for their links
    for ((i = 0; i < 50; i++)); do
        ip -o link show | grep -q "${LAB}v" || break
        sleep 0.1
    done
    rm -f "$DIR/env"
}

# A bridge and net number nobody else uses now: lab runs may overlap.
pick_lab() {
    local n
    for n in $(seq 90 130); do
        if ! ip link show "hvl${n}br" >/dev/null 2>&1 &&
            ! ip -4 addr | grep -q " 10\.$n\.0\."; then
            if ip link add "hvl${n}br" type bridge 2>/dev/null; then
                LAB=hvl$n
                NET=$n
                return 0
            fi
        fi
    done
    echo "netlab: no free lab number" >&2
    return 1
}

sshd_config() { # HOST_INDEX ADDRESS
    cat <<EOF
Port 22
Port 2222
ListenAddress $2
HostKey $DIR/hostkey$1
PidFile $DIR/sshd$1.pid
AuthorizedKeysFile $DIR/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
LogLevel VERBOSE
EOF
}

# A decoy interface that is up and running: one end of a veth pair whose
# other end stays in the same namespace (no dummy devices everywhere).
decoy() { # NAMESPACE NAME ADDRESS
    ip -n "$1" link add "$2" type veth peer name "${2}p"
    ip -n "$1" addr add "$3" dev "$2"
    ip -n "$1" link set "${2}p" up
    ip -n "$1" link set "$2" up
}

add_host() { # INDEX
    local i=$1 ns=${LAB}h$1 addr=10.$NET.0.$((10 + $1)) ifname=eth0
    [ $((i % 2)) -eq 0 ] && ifname=ens5
    ip netns add "$ns"
    ip link add "${LAB}v$i" type veth peer name "$ifname" netns "$ns"
    ip link set "${LAB}v$i" master "${LAB}br" up
    ip -n "$ns" link set lo up
    ip -n "$ns" addr add "$addr/24" dev "$ifname"
    ip -n "$ns" link set "$ifname" up
    decoy "$ns" docker0 172.17.0.1/16
    decoy "$ns" eth1 "10.201.$i.1/24"
    ssh-keygen -q -t ed25519 -N '' -C "netlab-host$i" -f "$DIR/hostkey$i"
    sshd_config "$i" "$addr" >"$DIR/sshd$i.conf"
    echo "$addr $(cut -d' ' -f1,2 "$DIR/hostkey$i.pub")" \
        >>"$DIR/home/.ssh/known_hosts"
    # Hosts after the first resolve their own name to 127.0.1.1, as a
    # fresh Debian does (/etc/hosts): a framework that trusts the name
    # gets loopback, the trap hvdrun must keep workers out of.
    # (A system without /etc/hosts, a minimal chroot, has no file to mount
    # over: there the name does not resolve at all, and the lab says so.)
    printf '127.0.0.1\tlocalhost\n127.0.1.1\t%s\n' "$(hostname)" >"$DIR/etc_hosts$i"
    if [ "$i" -eq 2 ] && [ ! -e /etc/hosts ]; then
        echo "netlab: no /etc/hosts here: hosts 2.. cannot resolve their name to 127.0.1.1" >&2
    fi
    # A fresh host runs none of the launch user's shell start-up files
    # (here they may start tool managers that cost seconds); the mounts
    # stay inside this sshd's mount namespace.
    ip netns exec "$ns" sh -c '
        for f in "$HOME/.bashrc" "$HOME/.profile" "$HOME/.bash_profile"; do
            [ -e "$f" ] && mount --bind /dev/null "$f"
        done
        [ "$3" -gt 1 ] && [ -e /etc/hosts ] && mount --bind "$4" /etc/hosts
        exec /usr/sbin/sshd -f "$1" -E "$2"' sh "$DIR/sshd$i.conf" "$DIR/sshd$i.log" \
        "$i" "$DIR/etc_hosts$i"
    echo "$addr" >>"$DIR/hosts"
}

# Waits until every sshd answers (bounded: 5 s).
wait_sshd() {
    local addr t
    while read -r addr; do
        for ((t = 0; t < 50; t++)); do
            timeout 1 bash -c "exec 3<>/dev/tcp/$addr/22" 2>/dev/null && break
            sleep 0.1
        done
        [ "$t" -lt 50 ] || { echo "netlab: sshd on $addr did not start" >&2; return 1; }
    done <"$DIR/hosts"
}

up() {
    local n=${1:?usage: netlab.sh up DIR N} i
    [ "$(id -u)" -eq 0 ] || { echo "netlab: needs root" >&2; return 1; }
    mkdir -p "$DIR/home/.ssh" /run/sshd
    chmod 700 "$DIR/home" "$DIR/home/.ssh"
    : >"$DIR/hosts"
    : >"$DIR/home/.ssh/known_hosts"
    pick_lab
    # From here on `down` can undo what exists.
    printf 'LAB=%s\nNET=%s\nLAB_HOSTS=%s\nLAB_DIR=%s\n' "$LAB" "$NET" "$n" \
        "$DIR" >"$DIR/env"
    trap 'down' ERR
    ip addr add "10.$NET.0.1/24" dev "${LAB}br"
    ip link set "${LAB}br" up
    ssh-keygen -q -t ed25519 -N '' -C netlab-user -f "$DIR/home/.ssh/id_ed25519"
    cp "$DIR/home/.ssh/id_ed25519.pub" "$DIR/authorized_keys"
    for ((i = 1; i <= n; i++)); do add_host "$i"; done
    wait_sshd
    echo "LAB_ADDRS=\"$(tr '\n' ' ' <"$DIR/hosts")\"" >>"$DIR/env"
    echo "LAB_GATEWAY=10.$NET.0.1" >>"$DIR/env"
    trap - ERR
}

case $cmd in
up) up "${3:-}" ;;
down) down ;;
*) echo "usage: netlab.sh up DIR N | down DIR" >&2; exit 64 ;;
esac
