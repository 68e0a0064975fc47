#!/usr/bin/env bash
# Every rank gets its identity, in Horovod's and torchrun's variables.
. "$(dirname "$0")/lib.sh"

cat >"$TMP/show.sh" <<'SH'
echo "id $HOROVOD_RANK $HOROVOD_SIZE $HOROVOD_LOCAL_RANK $HOROVOD_LOCAL_SIZE $HOROVOD_CROSS_RANK $HOROVOD_CROSS_SIZE $RANK $WORLD_SIZE $LOCAL_RANK $LOCAL_WORLD_SIZE $GROUP_RANK $GROUP_WORLD_SIZE $MASTER_ADDR $HOROVOD_GLOO_IFACE $HOROVOD_CONTROLLER $PYTHONUNBUFFERED ${OLDPWD:-none} ${CUDA_VISIBLE_DEVICES:-none} ${EXTRA:-none} ${FWD:-none} $(pwd)"
SH
mkdir -p "$TMP/work"
cd "$TMP/work"
FWD=forwarded OLDPWD=/x CUDA_VISIBLE_DEVICES=3 hvd -np 4 -H localhost:4 -x EXTRA=yes bash "$TMP/show.sh"
check "4 ranks exit 0" [ "$RC" -eq 0 ]
for r in 0 1 2 3; do
    want="[$r]<stdout>:id $r 4 $r 4 0 1 $r 4 $r 4 0 1 127.0.0.1 lo gloo 1 none none yes forwarded $TMP/work"
    check "rank $r identity" grep -qxF "$want" "$TMP/out"
done
# A worker that is a script without "#!" runs through /bin/sh, which
# glibc's execvpe does by copying argv onto the stack of the child that
# shares hvdrun's memory until its exec: 9000 arguments once overflowed
# that stack into hvdrun's heap ("free(): invalid size")
printf 'echo "args $#"\n' >"$TMP/noshebang"
chmod +x "$TMP/noshebang"
hvd -np 2 -H localhost:2 "$TMP/noshebang" $(seq 9000)
check "a script without #! and 9000 arguments runs (exit 0)" [ "$RC" -eq 0 ]
check "its ranks saw every argument" \
    [ "$(grep -c '<stdout>:args 9000$' "$TMP/out")" -eq 2 ]
port=$(FWD=1 timeout 30 "$HVDRUN" -np 2 sh -c 'echo $MASTER_PORT' | cut -d: -f2 | sort -u)
check "one MASTER_PORT for all ranks" [ "$(echo "$port" | wc -l)" -eq 1 ]
check "MASTER_PORT is a port" [ "$port" -gt 0 ] 2>/dev/null

# -np below the slots takes the first slots; config file under command line
cat >"$TMP/job.yaml" <<'Y'
np: 3
params:
  cycle_time_ms: 7
env:
  - EXTRA=from-file
Y
hvd --config-file "$TMP/job.yaml" -H localhost:8 sh -c 'echo $HOROVOD_SIZE $HOROVOD_CYCLE_TIME $EXTRA'
check "config file gives np and tunables" grep -qxF "[2]<stdout>:3 7 from-file" "$TMP/out"
hvd --config-file "$TMP/job.yaml" -np 2 -x EXTRA=cli -H localhost:8 sh -c 'echo $HOROVOD_SIZE $EXTRA'
check "command line wins over config file" grep -qxF "[1]<stdout>:2 cli" "$TMP/out"
check "... and only 2 ranks ran" [ "$(wc -l <"$TMP/out")" -eq 2 ]

# host file, plain format
printf 'localhost slots=2\n' >"$TMP/hosts"
hvd --hostfile "$TMP/hosts" sh -c 'echo $HOROVOD_LOCAL_SIZE'
check "host file slots" [ "$(grep -c ':2$' "$TMP/out")" -eq 2 ]

# --dry-run prints the plan and an environment, starts nothing
hvd --dry-run --dry-run-rank 2 -np 3 -H worker-0:1,worker-1:2 touch "$TMP/ran"
check "dry run exits 0" [ "$RC" -eq 0 ]
check "dry run starts nothing" [ ! -e "$TMP/ran" ]
check "dry run table row" grep -qE '^2 +worker-1 +1 +0 +2 +1 *$' "$TMP/out"
check "dry run env of chosen rank" grep -qx "HOROVOD_RANK=2" "$TMP/out"
# what of hvdrun's environment the workers do not get is named
OLDPWD=/x CUDA_VISIBLE_DEVICES=3 hvd --dry-run -np 2 true
check "dry run names what stays behind" \
    grep -qE '^not passed on: (.* )?(OLDPWD .*CUDA_VISIBLE_DEVICES|CUDA_VISIBLE_DEVICES .*OLDPWD)( |$)' "$TMP/out"
check "dry run env cross size" grep -qx "HOROVOD_CROSS_SIZE=1" "$TMP/out"

# -np above the slots: warned, scaled
hvd -np 4 -H localhost:2 sh -c 'echo $HOROVOD_LOCAL_SIZE'
check "np above slots runs 4" [ "$(grep -c ':4$' "$TMP/out")" -eq 4 ]
check "np above slots warns" grep -q "warning: -np 4 is more than the 2 slots" "$TMP/err"
# this host under its own names and addresses runs without SSH
for h in 127.0.0.1 "$(hostname)" "$(hostname -I 2>/dev/null | cut -d' ' -f1)"; do
    [ -n "$h" ] || continue
    hvd -H "$h:2" sh -c 'echo $HOROVOD_HOSTNAME'
    n=$(grep -c ":$h\$" "$TMP/out")
    check "'$h' is this host" [ "$RC" -eq 0 -a "$n" -eq 2 ]
done
# --network-interface on one host: by name or by address range
hvd --network-interface nosuch0,lo -np 2 sh -c 'echo $HOROVOD_GLOO_IFACE $NCCL_SOCKET_IFNAME $MASTER_ADDR'
check "--network-interface by name (first match wins)" [ "$(grep -c ':lo lo 127.0.0.1$' "$TMP/out")" -eq 2 ]
hvd --network-interface 127.0.0.0/8 -np 1 sh -c 'echo $HOROVOD_GLOO_IFACE'
check "--network-interface by CIDR" grep -qx '\[0\]<stdout>:lo' "$TMP/out"
finish
