# Helpers the benchmark scripts source.

# median: the median of the whole numbers on stdin (for an even count,
# the mean of the middle two, rounded down).
median() { sort -n | awk '{v[NR]=$1} END {m=int((NR+1)/2); if (NR%2) print v[m]; else print int((v[m]+v[m+1])/2)}'; }

# wall_us NAME COMMAND...: the wall time of one run of COMMAND, in
# microseconds; says that NAME's command failed, and exits, when it fails.
wall_us() {
    local name=$1 t0 t1
    shift
    t0=$(date +%s%N)
    "$@" >/dev/null 2>&1 || { echo "$name: failed: $*" >&2; exit 1; }
    t1=$(date +%s%N)
    echo $(((t1 - t0) / 1000))
}
