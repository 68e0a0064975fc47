"""Horovod's PyTorch operations on libcollective: the same names, arguments
and results as horovod.torch's, on CPU tensors (and GPU tensors where
libcollective has its NCCL backend).

Allreduces are queued with libcollective's background thread, which
agrees with the other ranks on the names every rank has queued and fuses
them (as Horovod's coordinator does); the other operations run at once,
in the order the ranks call them, and their _async forms return a handle
that is already done.
"""
import ctypes
import math
import threading

import torch

from collective._lib import CollectiveError, lib

from .compression import Compression


class HorovodInternalError(CollectiveError):
    """A collective failed on this rank: a peer died or timed out, or the
    ranks disagreed. Horovod's name, so that scripts catching it work."""


# Horovod's op constants. Adasum is named so that scripts import, and
# refused when used.
Average, Sum, Adasum, Min, Max, Product = 1, 0, -1, 2, 3, 4
_COLL_OP = {Sum: 0, Average: 1, Min: 2, Max: 3, Product: 4}

_COLL_DT = {
    torch.uint8: 0,
    torch.int8: 1,
    torch.int32: 2,
    torch.int64: 3,
    torch.float16: 4,
    torch.bfloat16: 5,
    torch.float32: 6,
    torch.float64: 7,
}


class ProcessSet:
    """Horovod's process set: only the global one (every rank) exists."""

    def __init__(self, ranks=None):
        self.ranks = sorted(ranks) if ranks is not None else None
        self.process_set_id = 0

    def included(self):
        return True

    def size(self):
        return size()

    def rank(self):
        return rank()


global_process_set = ProcessSet()


class _State:
    comm = None  # the coll_comm, once init() ran
    lock = threading.Lock()
    handles = {}  # handle -> (request, keep-alive, output, finish)
    next_handle = 0


def _new_handle():
    with _State.lock:
        _State.next_handle += 1
        return _State.next_handle


def _comm():
    if _State.comm is None:
        raise ValueError("Horovod has not been initialized; use hvd.init().")
    return _State.comm


def _check(code):
    if code != 0:
        detail = lib.coll_last_error(_State.comm).decode(errors="replace")
        name = lib.coll_strerror(code).decode()
        raise HorovodInternalError(code, f"{name}: {detail}")


def init(comm=None, process_sets=None):
    """Joins the job hvdrun started (a job of one without it). Only the
    global process set exists: comm and process_sets must be None."""
    if comm is not None or process_sets not in (None, []):
        raise NotImplementedError("only the global process set exists")
    if _State.comm is not None:
        return
    handle = ctypes.c_void_p()
    code = lib.coll_init(ctypes.byref(handle))
    if code != 0:
        detail = lib.coll_last_error(None).decode(errors="replace")
        raise HorovodInternalError(code, "%s: %s" % (
            lib.coll_strerror(code).decode(), detail))
    _State.comm = handle


def shutdown():
    """Leaves the job (waiting for every rank's pending requests)."""
    if _State.comm is not None:
        lib.coll_finalize(_State.comm)
        _State.comm = None
        # requests never synchronized: each is waited for now (it returns
        # at once after finalize), which frees it and its hold on the comm
        for request, *_ in _State.handles.values():
            lib.coll_wait(request)
        _State.handles.clear()


def is_initialized():
    return _State.comm is not None


def size():
    return lib.coll_size(_comm())


def rank():
    return lib.coll_rank(_comm())


def local_rank():
    return lib.coll_local_rank(_comm())


def local_size():
    return lib.coll_local_size(_comm())


def cross_rank():
    return lib.coll_cross_rank(_comm())


def cross_size():
    return lib.coll_cross_size(_comm())


def is_homogeneous():
    """Every host runs the same number of ranks."""
    counts = allgather(torch.tensor([local_size()]))
    return bool((counts == counts[0]).all())


def nccl_built():
    """NCCL's version code when GPU tensors go to NCCL, else 0."""
    return lib.coll_nccl_built()


def gloo_built():
    return True


def gloo_enabled():
    return True


def mpi_built():
    return False


def mpi_enabled():
    return False


def mpi_threads_supported():
    raise ValueError("MPI is not enabled: libcollective runs on Gloo's "
                     "controller and its own TCP ring")


def cuda_built():
    return nccl_built() != 0


def rocm_built():
    return False


def ccl_built():
    return False


def ddl_built():
    return False


def _dtype(tensor):
    try:
        return _COLL_DT[tensor.dtype]
    except KeyError:
        raise TypeError("libcollective has no %s: use one of %s" % (
            tensor.dtype, ", ".join(str(d) for d in _COLL_DT))) from None


def _usable(tensor):
    if not tensor.is_contiguous():
        raise ValueError("the tensor must be contiguous")
    if tensor.is_cuda and not nccl_built():
        raise TypeError("this libcollective has no NCCL backend: GPU "
                        "tensors cannot be reduced; move them to the CPU")
    return _dtype(tensor)


def _op_of(average, op, process_set=global_process_set):
    if process_set is not global_process_set and process_set is not None:
        raise NotImplementedError("only the global process set exists")
    if average is not None and op is not None:
        raise ValueError("The op parameter supersedes average. Please "
                         "provide only one of them.")
    if op is None:
        op = Sum if average is False else Average
    if op == Adasum:
        raise NotImplementedError("Adasum is not supported by libcollective")
    if op not in _COLL_OP:
        raise ValueError("unknown op %r" % (op,))
    return op


def _scale(tensor, factor):
    """tensor * factor in its own dtype (integers truncate)."""
    if factor == 1.0:
        return tensor
    return torch.mul(tensor, factor).to(tensor.dtype)


def _register(request, keep, output, finish=None):
    handle = _new_handle()
    with _State.lock:
        _State.handles[handle] = (request, keep, output, finish)
    return handle


def _done(output, finish=None):
    """A handle for an operation that already ran."""
    return _register(None, None, output, finish)


def _allreduce_async(tensor, output, name, op, prescale_factor,
                     postscale_factor):
    dt = _usable(tensor)
    handle = _new_handle()
    full = "allreduce.%s" % (name if name else "noname.%d" % handle)
    if output is tensor:  # in place: scaled where it is
        if prescale_factor != 1.0:
            tensor.copy_(_scale(tensor, prescale_factor))
        send = tensor
    else:  # the input stays as it was
        send = _scale(tensor, prescale_factor)
    request = ctypes.c_void_p()
    _check(lib.coll_allreduce_async(_comm(), full.encode(), send.data_ptr(),
                                    output.data_ptr(), tensor.numel(), dt,
                                    _COLL_OP[op], ctypes.byref(request)))

    def finish(out):
        if postscale_factor != 1.0:
            out.copy_(_scale(out, postscale_factor))
        return out

    with _State.lock:
        _State.handles[handle] = (request, (tensor, send), output, finish)
    return handle


def allreduce_async(tensor, average=None, name=None, op=None,
                    prescale_factor=1.0, postscale_factor=1.0,
                    process_set=global_process_set):
    """Queues an allreduce of tensor into a new tensor; synchronize(handle)
    returns it."""
    op = _op_of(average, op, process_set)
    tensor = tensor.contiguous()  # out of place: a copy if need be
    return _allreduce_async(tensor, torch.empty_like(tensor), name, op,
                            prescale_factor, postscale_factor)


def allreduce_async_(tensor, average=None, name=None, op=None,
                     prescale_factor=1.0, postscale_factor=1.0,
                     process_set=global_process_set):
    """Queues an in-place allreduce of tensor."""
    op = _op_of(average, op, process_set)
    return _allreduce_async(tensor, tensor, name, op, prescale_factor,
                            postscale_factor)


class _AllreduceFunction(torch.autograd.Function):
    """The gradient of an allreduce is the allreduce of the gradient."""

    @staticmethod
    def forward(ctx, tensor, name, op, prescale, postscale):
        ctx.args = (op, prescale, postscale)
        tensor = tensor.contiguous()
        return synchronize(_allreduce_async(tensor, torch.empty_like(tensor),
                                            name, op, prescale, postscale))

    @staticmethod
    def backward(ctx, grad):
        op, prescale, postscale = ctx.args
        return (allreduce(grad.contiguous(), op=op, prescale_factor=prescale,
                          postscale_factor=postscale), None, None, None, None)


def allreduce(tensor, average=None, name=None,
              compression=Compression.none, op=None, prescale_factor=1.0,
              postscale_factor=1.0, process_set=global_process_set):
    """op (Average by default) over every rank's tensor, as a new tensor;
    compression (Compression.fp16) applies on the way."""
    op = _op_of(average, op, process_set)
    compressed, ctx = compression.compress(tensor)
    out = _AllreduceFunction.apply(compressed, name, op, prescale_factor,
                                   postscale_factor)
    return compression.decompress(out, ctx)


def allreduce_(tensor, average=None, name=None, op=None, prescale_factor=1.0,
               postscale_factor=1.0, process_set=global_process_set):
    """In-place allreduce; returns tensor."""
    return synchronize(allreduce_async_(tensor, average, name, op,
                                        prescale_factor, postscale_factor,
                                        process_set))


def _grouped(tensors, name, op, pre, post, in_place):
    handles = []
    n = len(tensors)
    for i, t in enumerate(tensors):
        part = "%s_%dof%d" % (name, i + 1, n) if name else None
        handles.append(_allreduce_async(t, t if in_place else
                                        torch.empty_like(t), part, op, pre,
                                        post))
    return handles


def grouped_allreduce_async(tensors, average=None, name=None, op=None,
                            prescale_factor=1.0, postscale_factor=1.0,
                            process_set=global_process_set):
    op = _op_of(average, op, process_set)
    handles = _grouped(tensors, name and "grouped_allreduce." + name, op,
                       prescale_factor, postscale_factor, False)
    return _done(handles, lambda hs: [synchronize(h) for h in hs])


def grouped_allreduce_async_(tensors, average=None, name=None, op=None,
                             prescale_factor=1.0, postscale_factor=1.0,
                             process_set=global_process_set):
    op = _op_of(average, op, process_set)
    handles = _grouped(tensors, name and "grouped_allreduce." + name, op,
                       prescale_factor, postscale_factor, True)
    return _done(handles, lambda hs: [synchronize(h) for h in hs])


def grouped_allreduce(tensors, average=None, name=None,
                      compression=Compression.none, op=None,
                      prescale_factor=1.0, postscale_factor=1.0,
                      process_set=global_process_set):
    """A list: each tensor allreduced, all of them queued at once (the
    background thread fuses them)."""
    op = _op_of(average, op, process_set)
    packed = [compression.compress(t) for t in tensors]
    outs = synchronize(grouped_allreduce_async(
        [c for c, _ in packed], None, name, op, prescale_factor,
        postscale_factor))
    return [compression.decompress(o, ctx) for o, (_, ctx) in
            zip(outs, packed)]


def grouped_allreduce_(tensors, average=None, name=None, op=None,
                       prescale_factor=1.0, postscale_factor=1.0,
                       process_set=global_process_set):
    return synchronize(grouped_allreduce_async_(
        tensors, average, name, op, prescale_factor, postscale_factor,
        process_set))


def _sizes_t(values):
    return (ctypes.c_size_t * len(values))(*values)


def _allgather(tensor):
    """Every rank's tensor, concatenated along the first dimension; and
    each rank's number of rows."""
    dt = _usable(tensor)
    n = size()
    if tensor.dim() == 0:
        tensor = tensor.reshape(1)
    shape = torch.tensor(list(tensor.shape), dtype=torch.int64)
    shapes = torch.empty((n, shape.numel()), dtype=torch.int64)
    _check(lib.coll_allgather(_comm(), shape.data_ptr(), shapes.data_ptr(),
                              shape.numel(), _COLL_DT[torch.int64]))
    for k in range(n):
        if not torch.equal(shapes[k, 1:], shape[1:]):
            raise ValueError("allgather: rank %d's tensor has shape %s, this "
                             "rank's %s: all but the first dimension must "
                             "agree" % (k, tuple(shapes[k].tolist()),
                                        tuple(tensor.shape)))
    rows = shapes[:, 0].tolist()
    row = math.prod(tensor.shape[1:])
    out = torch.empty((sum(rows),) + tuple(tensor.shape[1:]),
                      dtype=tensor.dtype, device=tensor.device)
    _check(lib.coll_allgatherv(_comm(), tensor.data_ptr(), tensor.numel(),
                               out.data_ptr(),
                               _sizes_t([r * row for r in rows]), dt))
    return out, rows


class _AllgatherFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, tensor):
        out, rows = _allgather(tensor)
        ctx.rows = rows
        return out

    @staticmethod
    def backward(ctx, grad):
        # as Horovod's: average the gradient, keep this rank's rows
        grad = allreduce(grad.contiguous(), op=Average)
        start = sum(ctx.rows[:rank()])
        return grad.narrow(0, start, ctx.rows[rank()])


def allgather(tensor, name=None, process_set=global_process_set):
    """Every rank's tensor concatenated along the first dimension, in rank
    order (first dimensions may differ; the others must agree)."""
    _op_of(None, None, process_set)
    return _AllgatherFunction.apply(tensor.contiguous())


def allgather_async(tensor, name=None, process_set=global_process_set):
    return _done(allgather(tensor, name, process_set))


def grouped_allgather(tensors, name=None, process_set=global_process_set):
    return [allgather(t, name, process_set) for t in tensors]


def broadcast_(tensor, root_rank, name=None, process_set=global_process_set):
    """Overwrites tensor with root_rank's; returns it."""
    _op_of(None, None, process_set)
    dt = _usable(tensor)
    _check(lib.coll_broadcast(_comm(), tensor.data_ptr(), tensor.numel(), dt,
                              root_rank))
    return tensor


def broadcast(tensor, root_rank, name=None, process_set=global_process_set):
    """root_rank's tensor, as a new tensor on every rank."""
    return broadcast_(tensor.detach().clone(), root_rank, name, process_set)


def broadcast_async(tensor, root_rank, name=None,
                    process_set=global_process_set):
    return _done(broadcast(tensor, root_rank, name, process_set))


def broadcast_async_(tensor, root_rank, name=None,
                     process_set=global_process_set):
    return _done(broadcast_(tensor, root_rank, name, process_set))


def alltoall(tensor, splits=None, name=None, process_set=global_process_set):
    """Rows of tensor's first dimension go to the ranks: splits[k] of them
    to rank k (an even split without splits). The rows every rank sent
    here, in rank order; with splits, (that, the rows received from each
    rank)."""
    _op_of(None, None, process_set)
    tensor = tensor.contiguous()
    dt = _usable(tensor)
    n = size()
    rows_total = tensor.shape[0] if tensor.dim() else 1
    if splits is None:
        if rows_total % n:
            raise ValueError("alltoall: %d rows do not split evenly over %d "
                             "ranks: give splits" % (rows_total, n))
        send = torch.full((n,), rows_total // n, dtype=torch.int64)
    else:
        send = torch.as_tensor(splits, dtype=torch.int64).flatten().cpu()
        if send.numel() != n or int(send.sum()) != rows_total or \
                bool((send < 0).any()):
            raise ValueError("alltoall: splits must give %d non-negative "
                             "row counts that add up to %d" % (n, rows_total))
        send = send.contiguous()
    recv = torch.empty(n, dtype=torch.int64)
    _check(lib.coll_alltoall(_comm(), send.data_ptr(), recv.data_ptr(), 1,
                             _COLL_DT[torch.int64]))
    row = math.prod(tensor.shape[1:]) if tensor.dim() else 1
    out = torch.empty((int(recv.sum()),) + tuple(tensor.shape[1:]),
                      dtype=tensor.dtype, device=tensor.device)
    _check(lib.coll_alltoallv(_comm(), tensor.data_ptr(),
                              _sizes_t([int(r) * row for r in send]),
                              out.data_ptr(),
                              _sizes_t([int(r) * row for r in recv]), dt))
    return out if splits is None else (out, recv.to(torch.int32))


def alltoall_async(tensor, splits=None, name=None,
                   process_set=global_process_set):
    out = alltoall(tensor, splits, name, process_set)
    return _done(out if isinstance(out, tuple) else (out, None))


def reducescatter(tensor, name=None, compression=Compression.none, op=Average,
                  process_set=global_process_set):
    """op (Average by default) over every rank's tensor, of which this rank
    keeps its rows of the first dimension: dim0 // size, one more for the
    first dim0 % size ranks."""
    op = _op_of(None, op, process_set)
    compressed, ctx = compression.compress(tensor.contiguous())
    dt = _usable(compressed)
    n, me = size(), rank()
    rows = compressed.shape[0] if compressed.dim() else 1
    mine = rows // n + (me < rows % n)
    start = me * (rows // n) + min(me, rows % n)
    if rows % n == 0 and compressed.dim():
        # the library's blocks are whole rows then
        out = torch.empty((mine,) + tuple(compressed.shape[1:]),
                          dtype=compressed.dtype, device=compressed.device)
        _check(lib.coll_reducescatter(_comm(), compressed.data_ptr(),
                                      out.data_ptr(), compressed.numel(), dt,
                                      _COLL_OP[op]))
    else:
        whole = torch.empty_like(compressed)
        _check(lib.coll_allreduce(_comm(), compressed.data_ptr(),
                                  whole.data_ptr(), compressed.numel(), dt,
                                  _COLL_OP[op]))
        out = whole.narrow(0, start, mine).clone() if compressed.dim() \
            else whole
    return compression.decompress(out, ctx)


def reducescatter_async(tensor, name=None, op=Average,
                        process_set=global_process_set):
    return _done(reducescatter(tensor, name, op=op, process_set=process_set))


def grouped_reducescatter(tensors, name=None, compression=Compression.none,
                          op=Average, process_set=global_process_set):
    return [reducescatter(t, name, compression, op, process_set)
            for t in tensors]


def barrier(process_set=global_process_set):
    _op_of(None, None, process_set)
    _check(lib.coll_barrier(_comm()))


def join(device=-1):
    """This rank has no more batches: it gives zeros to the others'
    allreduces until every rank has joined. Returns the rank that joined
    last."""
    last = ctypes.c_int(-1)
    _check(lib.coll_join(_comm(), ctypes.byref(last)))
    return last.value


def poll(handle):
    """True once the operation behind handle has finished."""
    with _State.lock:
        entry = _State.handles.get(handle)
    if entry is None or entry[0] is None:
        return True
    done = ctypes.c_int(0)
    lib.coll_test(entry[0], ctypes.byref(done))
    return bool(done.value)


def synchronize(handle):
    """Waits for the operation behind handle; returns its result (None for
    an unknown handle)."""
    with _State.lock:
        entry = _State.handles.pop(handle, None)
    if entry is None:
        return None
    request, _keep, output, finish = entry
    if request is not None:
        _check(lib.coll_wait(request))
    return finish(output) if finish else output
