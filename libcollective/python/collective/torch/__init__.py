"""Horovod's PyTorch API on libcollective, so that a Horovod script runs
under hvdrun by changing one line:

    import collective.torch as hvd      # was: import horovod.torch as hvd

The names, arguments and results are horovod.torch's; what libcollective
lacks (Adasum, process sets other than the global one, MPI) raises
NotImplementedError or ValueError with the reason, never a wrong result.
"""
from . import elastic
from .compression import Compression
from .functions import (allgather_object, broadcast_object,
                        broadcast_optimizer_state, broadcast_parameters)
from .mpi_ops import (Adasum, Average, HorovodInternalError, Max, Min,
                      Product, ProcessSet, Sum, allgather, allgather_async,
                      allreduce, allreduce_, allreduce_async,
                      allreduce_async_, alltoall, alltoall_async, barrier,
                      broadcast, broadcast_, broadcast_async,
                      broadcast_async_, ccl_built, cross_rank, cross_size,
                      cuda_built, ddl_built, global_process_set, gloo_built,
                      gloo_enabled, grouped_allgather, grouped_allreduce,
                      grouped_allreduce_, grouped_allreduce_async,
                      grouped_allreduce_async_, grouped_reducescatter, init,
                      is_homogeneous, is_initialized, join, local_rank,
                      local_size, mpi_built, mpi_enabled,
                      mpi_threads_supported, nccl_built, poll, rank,
                      reducescatter, reducescatter_async, rocm_built,
                      shutdown, size, synchronize)
from .optimizer import DistributedOptimizer

__all__ = [name for name in dir() if not name.startswith("_")]
