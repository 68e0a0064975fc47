# Standing in for hvdrun's elastic mode beside a standalone hvdd (sourced
# by elastic.sh and torch_elastic.sh after lib.sh).

# elastic_hvdd HOSTS: hvdd for those hosts (names it knows; all on this
# machine); sets PORT and TOKEN
elastic_hvdd() {
    local size=0 h
    for h in ${1//,/ }; do size=$((size + ${h#*:})); done
    start_hvdd --size "$size" --hosts "$1"
    TOKEN=$(cat "$TMP/token")
}

# worker HOST RANK SIZE ROUND COMMAND...: one worker of a host with one
# slot, in the background; its pid in $W_<HOST>, its output in
# $TMP/w.HOST.ROUND
worker() {
    local host=$1 rank=$2 size=$3 round=$4
    shift 4
    env HOROVOD_GLOO_RENDEZVOUS_ADDR=127.0.0.1 HOROVOD_GLOO_RENDEZVOUS_PORT="$PORT" \
        HVDD_TOKEN="$TOKEN" HOROVOD_GLOO_IFACE=lo HOROVOD_HOSTNAME="$host" \
        HOROVOD_RANK=$rank HOROVOD_SIZE=$size HOROVOD_LOCAL_RANK=0 HOROVOD_LOCAL_SIZE=1 \
        HOROVOD_CROSS_RANK=$rank HOROVOD_CROSS_SIZE=$size \
        HOROVOD_ELASTIC=1 HOROVOD_ELASTIC_ROUND=$round HOROVOD_ELASTIC_TIMEOUT=30 \
        HOROVOD_GLOO_TIMEOUT_SECONDS=10 \
        "$@" >"$TMP/w.$host.$round" 2>&1 &
    eval "W_$host=$!"
}

# round HOSTS KEEP...: the launcher's POST /v1/round (each KEEP is
# HOST:PID); prints the HTTP status, the answer in $TMP/round
round() {
    local hosts=$1 keep="" k
    shift
    for k in "$@"; do keep+="${keep:+,}{\"host\":\"${k%:*}\",\"pid\":${k#*:}}"; done
    curl -s -o "$TMP/round" -w '%{http_code}' -H "Authorization: Bearer $TOKEN" \
        -X POST --data "{\"hosts\":\"$hosts\",\"keep\":[$keep]}" \
        "http://127.0.0.1:$PORT/v1/round"
}

