# Helpers the benchmark scripts source.

# median: the median of the whole numbers on stdin (for an even count,
# the mean of the middle two, rounded down).
median() { sort -n | awk '{v[NR]=$1} END {m=int((NR+1)/2); if (NR%2) print v[m]; else print int((v[m]+v[m+1])/2)}'; }

# mpirun's arguments that keep glibc's large blocks on its heap: OpenMPI's
# allreduce mallocs a temporary buffer per call, which glibc otherwise
# maps and unmaps each time for large sizes, a page fault per page per
# call (2 ranks, 64 MiB: 0.3 GB/s against 2.3 on the heap)
OMPI_HEAP=(-x MALLOC_MMAP_THRESHOLD_=4294967295 -x MALLOC_TRIM_THRESHOLD_=4294967295)

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
