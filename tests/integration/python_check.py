"""Test worker for the Python binding: results against numpy references,
and errors raised as CollectiveError."""
import os
import sys

import numpy as np

sys.path.insert(0, os.environ["COLLECTIVE_PY"])
import collective  # noqa: E402

comm = collective.Comm()
r, n = comm.rank, comm.size
a = np.arange(10, dtype=np.float32) + r
want = sum(np.arange(10, dtype=np.float32) + k for k in range(n))
assert np.array_equal(comm.allreduce(a), want), "allreduce sum"
assert np.array_equal(comm.allreduce(a, op="max"), a - r + n - 1), "max"
assert np.allclose(comm.allreduce(a.astype(np.float64), op="avg"),
                   want / n), "avg f64"
ints = np.full((2, 3), r + 1, dtype=np.int64)
assert comm.allreduce(ints, op="prod").shape == (2, 3), "shape kept"
g = comm.allgather(np.array([r, r * r], dtype=np.int32))
assert g.tolist() == [[k, k * k] for k in range(n)], "allgather"
b = np.full(5, r, dtype=np.float64)
comm.broadcast(b, root=n - 1)
assert (b == n - 1).all(), "broadcast"
# alltoall: rank r sends block k (rows 2k, 2k+1) to rank k
t = np.arange(2 * n * 3, dtype=np.int32).reshape(2 * n, 3) + 1000 * r
got = comm.alltoall(t)
assert got.shape == t.shape, "alltoall shape"
for k in range(n):
    assert np.array_equal(got[2 * k:2 * k + 2],
                          np.arange(2 * r * 3, 2 * r * 3 + 6,
                                    dtype=np.int32).reshape(2, 3) + 1000 * k
                          ), f"alltoall from {k}"
# reducescatter: rows when the first axis divides, else the flat block
m = np.arange(4 * n * 2, dtype=np.float64).reshape(4 * n, 2) * (r + 1)
total = np.arange(4 * n * 2, dtype=np.float64).reshape(4 * n, 2) * (
    n * (n + 1) / 2)
assert np.array_equal(comm.reducescatter(m), total[4 * r:4 * r + 4]), "rs"
flat = np.arange(7 * n + 1, dtype=np.int64)
mine = comm.reducescatter(flat, op="max")
start = (7 * n + 1) // n * r + min(r, (7 * n + 1) % n)
assert np.array_equal(mine, flat[start:start + len(mine)]), "rs flat"
assert len(mine) == 7 + (r < 1), "rs flat length"
comm.barrier()
if n > 1:  # a job of one cannot disagree with itself
    try:
        comm.allreduce(np.zeros(4 if r == 0 else 3, dtype=np.float32))
        raise AssertionError("mismatch not raised")
    except collective.CollectiveError as e:
        assert "different arguments" in str(e), str(e)
try:
    comm.allreduce(np.zeros(2, dtype=np.complex64))
    raise AssertionError("bad dtype accepted")
except TypeError:
    pass
# async, queued in a rank-dependent order
order = [(k + r) % 8 for k in range(8)]
reqs = {k: comm.allreduce_async(f"w{k}", np.full(k + 1, r + k, np.float64))
        for k in order}
for k in range(8):
    assert np.array_equal(reqs[k].wait(),
                          np.full(k + 1, sum(q + k for q in range(n)))), k

# async allgather and broadcast, among allreduces
g = comm.allgather_async("g", np.arange(3) + 10 * r)
b = comm.broadcast_async("b", np.full(4, float(r)), root=n - 1)
a = comm.allreduce_async("a", np.ones(5))
assert np.array_equal(b.wait(), np.full(4, float(n - 1)))
assert np.array_equal(a.wait(), np.full(5, float(n)))
assert np.array_equal(g.wait(), np.stack([np.arange(3) + 10 * q
                                          for q in range(n)]))

# fp16 compression: within size * 2^-10 of the largest input magnitude
x = np.random.default_rng(r).uniform(-1, 1, 100000).astype(np.float32)
exact = sum(np.random.default_rng(k).uniform(-1, 1, 100000)
            for k in range(n))
got = comm.allreduce(x, compression="fp16")
err = np.max(np.abs(got - exact))
assert err <= n * 2.0 ** -10, f"fp16 error {err}"
assert err > 0 or n == 1, "fp16 changed nothing: was it compressed?"
print(f"rank {r}: python binding ok (fp16 max error {err:.2e})")
