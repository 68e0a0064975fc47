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

printf 'node1 slots=2\nnode2 slots=two\n' >"$TMP/hosts"
expect 65 "$TMP/hosts:2: 'slots=two' needs an integer" --hostfile "$TMP/hosts" sh -c "$T"
printf 'hosts:\n  - name: a\n    slot: 2\n' >"$TMP/hosts.yaml"
expect 65 "$TMP/hosts.yaml:3:5: unknown key 'slot'" --hostfile "$TMP/hosts.yaml" sh -c "$T"
expect 65 "cannot open '$TMP/none'" --hostfile "$TMP/none" sh -c "$T"
printf 'params:\n  fusion_threshold: 64\n' >"$TMP/job.yaml"
expect 65 "$TMP/job.yaml:2:3: unknown key 'params.fusion_threshold'" --config-file "$TMP/job.yaml" -np 1 sh -c "$T"
expect 69 "hvdrun: server2.invalid: resolve: " -H localhost:1,server2.invalid:1 sh -c "$T"
expect 64 "--dry-run-rank 5: the job has ranks 0 to 1" --dry-run --dry-run-rank 5 -np 2
expect 64 "--network-interface 'nosuch0': no interface that is up on this host matches" --network-interface nosuch0 -np 1 sh -c "$T"
finish
