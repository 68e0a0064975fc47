"""Finding and loading libcollective, and the C API's prototypes (ctypes).

The library is looked for, in order: $COLLECTIVE_LIB; a copy inside this
package (what `pip install` from a built tree puts there); the path that
`cmake --install` wrote into _libpath.py; the build tree beside the
source (build/lib); the system's library path.
"""
import ctypes
import ctypes.util
import os

_HERE = os.path.dirname(os.path.abspath(__file__))


class CollectiveError(RuntimeError):
    """A libcollective call failed; .code is the negative COLL_E* code."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


def _installed_path():
    try:
        from collective._libpath import LIBRARY
    except ImportError:
        return None
    return os.path.normpath(os.path.join(_HERE, LIBRARY))


def _candidates():
    yield os.environ.get("COLLECTIVE_LIB")
    yield os.path.join(_HERE, "libcollective.so.0")
    yield _installed_path()
    yield os.path.join(_HERE, "..", "..", "..", "build", "lib",
                       "libcollective.so")
    yield ctypes.util.find_library("collective")


def find_library():
    """The path (or soname) of the libcollective this package loads."""
    for path in _candidates():
        if path and (os.path.exists(path) or not os.path.dirname(path)):
            return path
    raise OSError("libcollective not found: install it (cmake --install, "
                  "or pip install from a built tree) or set COLLECTIVE_LIB")


def _declare(lib):
    vp, sz, i = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int
    szp = ctypes.POINTER(sz)
    lib.coll_init.argtypes = [ctypes.POINTER(vp)]
    lib.coll_finalize.argtypes = [vp]
    for name in ("rank", "size", "local_rank", "local_size", "cross_rank",
                 "cross_size"):
        getattr(lib, "coll_" + name).argtypes = [vp]
    lib.coll_allreduce.argtypes = [vp, vp, vp, sz, i, i]
    lib.coll_allreduce_fp16.argtypes = [vp, vp, vp, sz, i]
    lib.coll_allreduce_async.argtypes = [vp, ctypes.c_char_p, vp, vp, sz, i, i,
                                         ctypes.POINTER(vp)]
    lib.coll_allgather_async.argtypes = [vp, ctypes.c_char_p, vp, vp, sz, i,
                                         ctypes.POINTER(vp)]
    lib.coll_broadcast_async.argtypes = [vp, ctypes.c_char_p, vp, sz, i, i,
                                         ctypes.POINTER(vp)]
    lib.coll_wait.argtypes = [vp]
    lib.coll_test.argtypes = [vp, ctypes.POINTER(i)]
    lib.coll_broadcast.argtypes = [vp, vp, sz, i, i]
    lib.coll_allgather.argtypes = [vp, vp, vp, sz, i]
    lib.coll_allgatherv.argtypes = [vp, vp, sz, vp, szp, i]
    lib.coll_alltoall.argtypes = [vp, vp, vp, sz, i]
    lib.coll_alltoallv.argtypes = [vp, vp, szp, vp, szp, i]
    lib.coll_reducescatter.argtypes = [vp, vp, vp, sz, i, i]
    lib.coll_barrier.argtypes = [vp]
    lib.coll_join.argtypes = [vp, ctypes.POINTER(i)]
    lib.coll_reset.argtypes = [vp]
    lib.coll_round.argtypes = [vp]
    lib.coll_round_fresh.argtypes = [vp]
    lib.coll_round_changed.argtypes = [vp, ctypes.POINTER(i)]
    lib.coll_nccl_built.argtypes = []
    lib.coll_strerror.restype = ctypes.c_char_p
    lib.coll_strerror.argtypes = [i]
    lib.coll_last_error.restype = ctypes.c_char_p
    lib.coll_last_error.argtypes = [vp]
    return lib


lib = _declare(ctypes.CDLL(find_library()))


def check(code, handle):
    """Raises CollectiveError for a failed call (handle: its comm, or
    None for coll_init)."""
    if code != 0:
        detail = lib.coll_last_error(handle).decode(errors="replace")
        name = lib.coll_strerror(code).decode()
        raise CollectiveError(code, f"{name}: {detail}")
