#!/usr/bin/env bash
# libcollective's NCCL backend: coll_check with every buffer in GPU
# memory, one rank per GPU (up to 4; NCCL refuses two ranks on one GPU),
# and a job whose ranks disagree on host or device memory. Skipped, with
# the reason, without the backend or without a GPU.
. "$(dirname "$0")/lib.sh"
CHECK_GPU=${COLL_CHECK_GPU:-}

if [ -z "$CHECK_GPU" ]; then
    echo "skip: this build has no NCCL backend (CMake found no CUDA toolkit with NCCL)"
    exit 77
fi
read -r gpus why < <("$CHECK_GPU" count)
if [ "${gpus:-0}" -eq 0 ]; then
    echo "skip: no GPU ($why)"
    exit 77
fi
np=$((gpus < 4 ? gpus : 4))

hvd -np "$np" "$CHECK_GPU"
check "$np ranks on $np GPUs: exit 0" [ "$RC" -eq 0 ]
check "$np ranks on $np GPUs: every rank passed every check" \
    [ "$(grep -c 'checks passed$' "$TMP/out")" -eq "$np" ]
[ "$RC" -eq 0 ] || cat "$TMP/out" "$TMP/err" >&2

# rank 0 with GPU memory, rank 1 with host memory: an error on both
hvd -np 2 "$CHECK_GPU" mixed
check "host and GPU buffers across ranks: an error on every rank" \
    [ "$RC" -eq 0 -a "$(grep -c 'mixed: ranks called the operation with different arguments' "$TMP/out")" -eq 2 ]
finish
