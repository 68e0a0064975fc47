#!/usr/bin/env bash
# Bad input: one clear line naming the culprit, a documented exit code,
# and no worker started.
. "$(dirname "$0")/lib.sh"

# expect CODE PATTERN ARGS...: hvdrun ARGS exits CODE and says PATTERN.
expect() {
    local code=$1 pattern=$2
    shift 2
    hvd "$@"
    if [ "$RC" -eq "$code" ] && grep -qF -- "$pattern" "$TMP/err" &&
        [ ! -e "$TMP/ran" ]; then
        ok "$* -> $code"
    else
        bad "$* -> $RC (want $code): $(head -c 300 "$TMP/err")"
    fi
}

T="touch $TMP/ran"
expect 64 "bad -H 'a:2,b:x': host entry 2 'b': slots must be" -H a:2,b:x sh -c "$T"
expect 64 "host entry 2 is empty" -H a:2,,b sh -c "$T"
expect 64 "an IPv6 address needs brackets" -H fe80::1:2 sh -c "$T"
expect 64 "unknown option '--bogus'" --bogus sh -c "$T"
expect 64 "try 'hvdrun --help'" --bogus sh -c "$T"
expect 64 "option '-np': expects an integer >= 1, not '0'" -np 0 sh -c "$T"
expect 64 "option '-np': expects an integer >= 1, not 'four'" -np four sh -c "$T"
expect 64 "option '-np' needs a value" -np
expect 64 "no command given" -np 2
expect 64 "give -np N, or hosts" sh -c "$T"
expect 64 "not both" -H localhost:1 --hostfile /dev/null sh -c "$T"
expect 64 "option '--kill-grace': expects a number >= 0" --kill-grace soon -np 1 sh -c "$T"
expect 64 "option '--kill-grace': expects a number >= 0, not '0x10'" --kill-grace 0x10 -np 1 sh -c "$T"
expect 64 "option '--rendezvous-port': expects a port from 0 to 65535, not '70000'" \
    --rendezvous-port 70000 -np 1 sh -c "$T"
# a long -H is cut in the message, not the reason
LONG_H=$(for i in $(seq 100 180); do printf 'host%d:8,' "$i"; done)bad!host:2
expect 64 "...': host entry 82: bad host name 'bad!host'" -H "$LONG_H" sh -c "$T"
# a choice in any case is the choice itself
expect 64 "--launcher local runs on this host only, not on 'server2.invalid'" \
    --launcher LOCAL -H localhost:1,server2.invalid:1 sh -c "$T"

printf 'node1 slots=2\nnode2 slots=two\n' >"$TMP/hosts"
expect 65 "$TMP/hosts:2: 'slots=two' needs an integer" --hostfile "$TMP/hosts" sh -c "$T"
printf 'hosts:\n  - name: a\n    slot: 2\n' >"$TMP/hosts.yaml"
expect 65 "$TMP/hosts.yaml:3:5: unknown key 'slot'" --hostfile "$TMP/hosts.yaml" sh -c "$T"
expect 65 "cannot open '$TMP/none'" --hostfile "$TMP/none" sh -c "$T"
printf -- '- &a n1\n- *a\n' >"$TMP/alias.yaml"
expect 65 "$TMP/alias.yaml:2:3: YAML aliases (*name) are not supported" --hostfile "$TMP/alias.yaml" sh -c "$T"
# the command line's hosts hide the config file's (either way of giving them)
printf 'hosts: server2.invalid:1\n' >"$TMP/hosts-in.yaml"
printf 'localhost slots=1\n' >"$TMP/local-hosts"
hvd --config-file "$TMP/hosts-in.yaml" --hostfile "$TMP/local-hosts" sh -c "$T"
ran_here() { [ "$RC" -eq 0 ] && [ -e "$TMP/ran" ]; }
check "--hostfile over a config file's hosts" ran_here
rm -f "$TMP/ran"
printf 'params:\n  fusion_threshold: 64\n' >"$TMP/job.yaml"
expect 65 "$TMP/job.yaml:2:3: unknown key 'params.fusion_threshold'" --config-file "$TMP/job.yaml" -np 1 sh -c "$T"
expect 69 "hvdrun: server2.invalid: resolve: " -H localhost:1,server2.invalid:1 sh -c "$T"
expect 64 "--dry-run-rank 5: the job has ranks 0 to 1" --dry-run --dry-run-rank 5 -np 2
expect 64 "--network-interface 'nosuch0': no interface that is up on this host matches" --network-interface nosuch0 -np 1 sh -c "$T"
# launchers: srun needs an allocation, local this host alone, and an
# allocation whose variables disagree is named (no Slurm needed to see it)
expect 64 "--launcher slurm: not inside a Slurm allocation" --launcher slurm sh -c "$T"
expect 64 "--launcher local runs on this host only, not on 'server2.invalid'" \
    --launcher local -H localhost:1,server2.invalid:1 sh -c "$T"
export SLURM_NODELIST='n[1-3]' SLURM_NNODES=2 SLURM_TASKS_PER_NODE='1(x2)'
expect 65 "hvdrun: the Slurm allocation: SLURM_NODELIST names 3 nodes, SLURM_NNODES says 2: 'n[1-3]'" sh -c "$T"
SLURM_TASKS_PER_NODE='2(x3)' SLURM_NNODES=3
plan_hosts() { awk '$1 ~ /^[0-9]+$/ {print $2}' "$TMP/out" | tr '\n' ' '; }
from_allocation() {
    [ "$(plan_hosts)" = "n1 n1 n2 n2 n3 n3 " ] &&
        grep -q '^agents: one srun step, hosts from the Slurm allocation: srun --nodes=3 ' "$TMP/out"
}
hvd --dry-run true
check "inside an allocation: its nodes, 2 ranks each, srun named" from_allocation
hvd -H n1:2,n3:1 --dry-run true
check "-H with the allocation's nodes: srun, on those nodes" \
    grep -q '^agents: one srun step: srun --nodes=2 .* --nodelist=n1,n3 ' "$TMP/out"
hvd -H n1:2,elsewhere:1 --dry-run true
check "-H with a host outside the allocation: SSH" \
    grep -qx 'agents: over SSH, one per host' "$TMP/out"
hvd -H localhost:1,n1:2 --dry-run true
check "-H localhost and a node: SSH (localhost is no node of srun's)" \
    grep -qx 'agents: over SSH, one per host' "$TMP/out"
hvd --launcher local -np 2 --dry-run true
check "--launcher local inside an allocation: this host only" \
    [ "$(plan_hosts)" = "localhost localhost " ]
unset SLURM_NODELIST SLURM_NNODES SLURM_TASKS_PER_NODE
# elastic hosts: the discovery script's first run, the cooldown range
D=--host-discovery-script
expect 65 "--host-discovery-script 'echo oops >&2; exit 3': exit 3: oops" $D 'echo oops >&2; exit 3' sh -c "$T"
expect 65 "line 2 'b c': expected host[:slots]" $D 'echo a:2; echo b c' sh -c "$T"
expect 65 "line 1 'a,b': expected host[:slots]" $D 'echo a,b' sh -c "$T"
expect 65 "found no hosts" $D 'true' sh -c "$T"
expect 65 "found 2 slots on 1 hosts, fewer than -np 3" $D 'echo a:2' -np 3 sh -c "$T"
expect 64 "not two" $D 'echo a' -H a sh -c "$T"
expect 64 "option '--blacklist-cooldown-range': expects two numbers MIN MAX, 0 <= MIN <= MAX, not '9 1'" \
    --blacklist-cooldown-range 9 1 -np 1 sh -c "$T"
expect 64 "option '--blacklist-cooldown-range' needs two values (MIN MAX)" --blacklist-cooldown-range 1
hvd --blacklist-cooldown-range 10,300 -np 1 --dry-run true
check "--blacklist-cooldown-range MIN,MAX as one word leaves -np alone" [ "$RC" -eq 0 ]
hvd --host-discovery-script 'printf "a:2\n\n  b \n"' --slots-per-host 3 --dry-run true
slots_as_listed() {
    [ "$(grep -c '^[0-9]* *a ' "$TMP/out")" -eq 2 ] &&
        [ "$(grep -c '^[0-9]* *b ' "$TMP/out")" -eq 3 ]
}
check "discovery: a host without slots gets --slots-per-host" slots_as_listed
finish
