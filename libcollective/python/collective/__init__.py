"""libcollective for Python: numpy arrays over the C API (ctypes).

    import collective
    comm = collective.Comm()          # identity from hvdrun's environment
    g = comm.allreduce(grad, op="avg")
    comm.broadcast(weights, root=0)   # in place
    comm.allgather(x), comm.alltoall(x), comm.reducescatter(x),
    comm.barrier(), and *_async forms of allreduce, allgather, broadcast

Horovod's PyTorch API is collective.torch. The library is found as
collective._lib says.
"""
import ctypes

import numpy as np

from collective._lib import CollectiveError  # noqa: F401
from collective._lib import lib as _clib

_DTYPES = {
    np.dtype(np.uint8): 0,
    np.dtype(np.int8): 1,
    np.dtype(np.int32): 2,
    np.dtype(np.int64): 3,
    np.dtype(np.float16): 4,
    np.dtype(np.float32): 6,
    np.dtype(np.float64): 7,
}
_OPS = {"sum": 0, "avg": 1, "min": 2, "max": 3, "prod": 4}


class Request:
    """A queued operation; .wait() returns its result array."""

    def __init__(self, comm, handle, src, out):
        self._comm, self._h, self._keep, self._out = comm, handle, src, out

    def done(self):
        flag = ctypes.c_int(0)
        _clib.coll_test(self._h, ctypes.byref(flag))
        return bool(flag.value)

    def wait(self):
        if self._h is not None:
            code = _clib.coll_wait(self._h)
            self._h = None
            self._comm._check(code, self._comm._c)
        return self._out


class Comm:
    """This process's membership in the job."""

    def __init__(self):
        handle = ctypes.c_void_p()
        self._check(_clib.coll_init(ctypes.byref(handle)), None)
        self._c = handle

    def _check(self, code, handle):
        if code != 0:
            detail = _clib.coll_last_error(handle).decode(errors="replace")
            name = _clib.coll_strerror(code).decode()
            raise CollectiveError(code, f"{name}: {detail}")

    def close(self):
        if self._c:
            _clib.coll_finalize(self._c)
            self._c = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    rank = property(lambda self: _clib.coll_rank(self._c))
    size = property(lambda self: _clib.coll_size(self._c))
    local_rank = property(lambda self: _clib.coll_local_rank(self._c))
    local_size = property(lambda self: _clib.coll_local_size(self._c))
    cross_rank = property(lambda self: _clib.coll_cross_rank(self._c))
    cross_size = property(lambda self: _clib.coll_cross_size(self._c))

    @staticmethod
    def _array(a):
        a = np.ascontiguousarray(a)
        if a.dtype not in _DTYPES:
            raise TypeError(f"dtype {a.dtype} is not supported")
        return a

    def allreduce(self, array, op="sum", compression=None):
        """A new array: op over every rank's array (same shape and dtype).
        compression="fp16" sends float32 data as half precision, as
        Horovod's Compression.fp16 does (about 3 significant digits)."""
        src = self._array(array)
        out = np.empty_like(src)
        if compression == "fp16":
            if src.dtype != np.float32:
                raise TypeError("fp16 compression is for float32 arrays")
            code = _clib.coll_allreduce_fp16(self._c, src.ctypes.data,
                                            out.ctypes.data, src.size,
                                            _OPS[op])
        elif compression is None:
            code = _clib.coll_allreduce(self._c, src.ctypes.data,
                                       out.ctypes.data, src.size,
                                       _DTYPES[src.dtype], _OPS[op])
        else:
            raise ValueError(f"unknown compression {compression!r}")
        self._check(code, self._c)
        return out

    def allreduce_async(self, name, array, op="sum"):
        """Queues an allreduce under name (fused with others by the
        background thread); returns a Request whose wait() gives the
        result."""
        src = self._array(array)
        out = np.empty_like(src)
        handle = ctypes.c_void_p()
        self._check(_clib.coll_allreduce_async(
            self._c, name.encode(), src.ctypes.data, out.ctypes.data,
            src.size, _DTYPES[src.dtype], _OPS[op], ctypes.byref(handle)),
            self._c)
        return Request(self, handle, src, out)

    def allgather_async(self, name, array):
        """Queues an allgather under name; wait() gives every rank's array
        stacked along a new first axis."""
        src = self._array(array)
        out = np.empty((self.size,) + src.shape, dtype=src.dtype)
        handle = ctypes.c_void_p()
        self._check(_clib.coll_allgather_async(
            self._c, name.encode(), src.ctypes.data, out.ctypes.data,
            src.size, _DTYPES[src.dtype], ctypes.byref(handle)), self._c)
        return Request(self, handle, src, out)

    def broadcast_async(self, name, array, root=0):
        """Queues a broadcast of root's array under name; wait() gives a
        new array holding it (array itself is left alone)."""
        out = np.array(self._array(array), copy=True)
        handle = ctypes.c_void_p()
        self._check(_clib.coll_broadcast_async(
            self._c, name.encode(), out.ctypes.data, out.size,
            _DTYPES[out.dtype], root, ctypes.byref(handle)), self._c)
        return Request(self, handle, out, out)

    def broadcast(self, array, root=0):
        """Overwrites a contiguous array with root's; returns it."""
        if not array.flags["C_CONTIGUOUS"]:
            raise ValueError("broadcast needs a contiguous array")
        self._array(array)
        self._check(_clib.coll_broadcast(self._c, array.ctypes.data,
                                        array.size, _DTYPES[array.dtype],
                                        root), self._c)
        return array

    def allgather(self, array):
        """Every rank's array stacked along a new first axis."""
        src = self._array(array)
        out = np.empty((self.size,) + src.shape, dtype=src.dtype)
        self._check(_clib.coll_allgather(self._c, src.ctypes.data,
                                        out.ctypes.data, src.size,
                                        _DTYPES[src.dtype]), self._c)
        return out

    def alltoall(self, array):
        """Splits array along its first axis into one block per rank
        (the first axis must divide by size); returns an array of the
        same shape holding every rank's block for this rank, in rank
        order."""
        src = self._array(array)
        if src.ndim == 0 or src.shape[0] % self.size:
            raise ValueError(f"alltoall: first axis of {src.shape} does "
                             f"not divide into {self.size} blocks")
        out = np.empty_like(src)
        self._check(_clib.coll_alltoall(self._c, src.ctypes.data,
                                       out.ctypes.data, src.size // self.size,
                                       _DTYPES[src.dtype]), self._c)
        return out

    def reducescatter(self, array, op="sum"):
        """op over every rank's array, of which this rank gets its block:
        its share of the rows when the first axis divides by the number
        of ranks; else its block of the flattened array (n // ranks
        elements of n, one more for the first n % ranks ranks)."""
        src = self._array(array)
        n, rank = self.size, self.rank
        rows = src.ndim > 0 and src.shape[0] % n == 0
        mine = src.size // n + (rank < src.size % n)
        out = np.empty((src.shape[0] // n,) + src.shape[1:] if rows
                       else (mine,), dtype=src.dtype)
        self._check(_clib.coll_reducescatter(self._c, src.ctypes.data,
                                            out.ctypes.data, src.size,
                                            _DTYPES[src.dtype], _OPS[op]),
                    self._c)
        return out

    def barrier(self):
        self._check(_clib.coll_barrier(self._c), self._c)
