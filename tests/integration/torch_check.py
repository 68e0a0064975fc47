"""Test worker for collective.torch (Horovod's PyTorch API): every
operation on every dtype that torch and libcollective share, against
references computed here; prints "ok <what>" per part, and raises (exit
1) at the first wrong result.

    hvdrun -np 3 /usr/bin/python3 torch_check.py ops
"""
import os
import sys

import torch

sys.path.insert(0, os.environ["COLLECTIVE_PY"])
import collective.torch as hvd  # noqa: E402

DTYPES = [torch.uint8, torch.int8, torch.int32, torch.int64, torch.float16,
          torch.bfloat16, torch.float32, torch.float64]
FLOATS = [torch.float16, torch.bfloat16, torch.float32, torch.float64]


def same(got, want, what):
    if got.dtype != want.dtype or got.shape != want.shape or \
            not torch.equal(got, want):
        raise AssertionError("%s: got %s, want %s" % (what, got, want))


def check_allreduce(r, n):
    for dt in DTYPES:
        base = (torch.arange(6) % 3).to(dt)
        t = base + (r + 1)
        want_sum = sum(base + (k + 1) for k in range(n))
        same(hvd.allreduce(t, op=hvd.Sum), want_sum, "sum %s" % dt)
        same(hvd.allreduce(t, op=hvd.Min), base + 1, "min %s" % dt)
        same(hvd.allreduce(t, op=hvd.Max), base + n, "max %s" % dt)
        bits = ((torch.arange(6) + r) % 2 + 1).to(dt)
        want_prod = torch.ones(6, dtype=dt)
        for k in range(n):
            want_prod = want_prod * ((torch.arange(6) + k) % 2 + 1).to(dt)
        same(hvd.allreduce(bits, op=hvd.Product), want_prod, "prod %s" % dt)
        inplace = t.clone()
        assert hvd.allreduce_(inplace, op=hvd.Sum) is inplace
        same(inplace, want_sum, "allreduce_ %s" % dt)
        same(t, base + (r + 1), "allreduce leaves its input")
    for dt in FLOATS:
        t = torch.full((5,), float(2 * r), dtype=dt)
        same(hvd.allreduce(t), torch.full((5,), float(n - 1), dtype=dt),
             "average (the default) %s" % dt)
        same(hvd.allreduce(t, average=False),
             torch.full((5,), float(n * (n - 1)), dtype=dt), "average=False")
        same(hvd.allreduce(t, op=hvd.Sum, prescale_factor=2.0,
                           postscale_factor=0.25),
             torch.full((5,), n * (n - 1) / 2.0, dtype=dt), "pre/postscale")
    print("ok allreduce", flush=True)


def check_async_grouped(r, n):
    ts = [torch.full((k + 1,), float(r), dtype=torch.float64)
          for k in range(4)]
    handles = [hvd.allreduce_async(t, name="t%d" % k, op=hvd.Sum)
               for k, t in enumerate(ts)]
    for k, h in enumerate(handles):
        for _ in range(20000):
            if hvd.poll(h):
                break
        out = hvd.synchronize(h)
        same(out, torch.full((k + 1,), float(n * (n - 1) / 2),
                             dtype=torch.float64), "async %d" % k)
    inplace = torch.full((3,), float(r + 1))
    hvd.synchronize(hvd.allreduce_async_(inplace, name="in", op=hvd.Max))
    same(inplace, torch.full((3,), float(n)), "allreduce_async_")
    outs = hvd.grouped_allreduce([t.clone() for t in ts], name="g",
                                 op=hvd.Sum)
    for k, out in enumerate(outs):
        same(out, torch.full((k + 1,), float(n * (n - 1) / 2),
                             dtype=torch.float64), "grouped %d" % k)
    group = [t.clone() for t in ts]
    hvd.grouped_allreduce_(group, op=hvd.Min)
    same(group[3], torch.zeros(4, dtype=torch.float64), "grouped_")
    print("ok async and grouped", flush=True)


def check_allgather_broadcast(r, n):
    for dt in DTYPES:
        mine = torch.full((r + 1, 2), r, dtype=dt)
        want = torch.cat([torch.full((k + 1, 2), k, dtype=dt)
                          for k in range(n)])
        same(hvd.allgather(mine), want, "ragged allgather %s" % dt)
        b = torch.full((3, 2), r, dtype=dt)
        same(hvd.broadcast(b, n - 1), torch.full((3, 2), n - 1, dtype=dt),
             "broadcast %s" % dt)
        same(b, torch.full((3, 2), r, dtype=dt), "broadcast leaves input")
        assert hvd.broadcast_(b, 0) is b
        same(b, torch.zeros((3, 2), dtype=dt), "broadcast_ %s" % dt)
    try:
        hvd.allgather(torch.zeros((1, r + 2)))
        if n > 1:
            raise AssertionError("allgather of mismatched rows passed")
    except ValueError:
        pass
    obj = hvd.broadcast_object({"rank": r, "words": ["a"] * r}, root_rank=1
                               if n > 1 else 0)
    assert obj == {"rank": 1 % n if n > 1 else 0,
                   "words": ["a"] * (1 if n > 1 else 0)}, obj
    everyone = hvd.allgather_object(("r", r, list(range(r))))
    assert everyone == [("r", k, list(range(k))) for k in range(n)], everyone
    print("ok allgather and broadcast", flush=True)


def check_alltoall(r, n):
    for dt in DTYPES:
        splits = [(r + k) % 3 for k in range(n)]
        rows = torch.cat([torch.full(((r + k) % 3, 2), 10 * r + k, dtype=dt)
                          for k in range(n)])
        out, received = hvd.alltoall(rows, splits=splits)
        want = torch.cat([torch.full(((k + r) % 3, 2), 10 * k + r, dtype=dt)
                          for k in range(n)])
        same(out, want, "alltoall with splits %s" % dt)
        same(received, torch.tensor([(k + r) % 3 for k in range(n)],
                                    dtype=torch.int32), "received splits")
        even = torch.arange(2 * n, dtype=torch.int64).to(dt) + r
        got = hvd.alltoall(even)
        want = torch.cat([torch.tensor([2 * r, 2 * r + 1]).to(dt) + k
                          for k in range(n)])
        same(got, want, "alltoall even %s" % dt)
    print("ok alltoall", flush=True)


def check_reducescatter(r, n):
    for dt in DTYPES:
        for rows in (2 * n, 2 * n + 1):
            t = (torch.arange(rows * 3).reshape(rows, 3) % 5).to(dt) + r
            whole = sum((torch.arange(rows * 3).reshape(rows, 3) % 5).to(dt)
                        + k for k in range(n))
            mine = rows // n + (r < rows % n)
            start = r * (rows // n) + min(r, rows % n)
            same(hvd.reducescatter(t, op=hvd.Sum),
                 whole.narrow(0, start, mine),
                 "reducescatter %d rows %s" % (rows, dt))
    avg = hvd.reducescatter(torch.full((2 * n, 2), float(2 * r)))
    same(avg, torch.full((2, 2), float(n - 1)), "reducescatter average")
    print("ok reducescatter", flush=True)


def check_gradients_compression(r, n):
    x = torch.ones(r + 1, 2, requires_grad=True)
    hvd.allgather(x).sum().backward()
    same(x.grad, torch.ones(r + 1, 2), "allgather gradient")
    y = torch.ones(3, requires_grad=True)
    hvd.allreduce(y, op=hvd.Sum).sum().backward()
    same(y.grad, torch.full((3,), float(n)), "allreduce gradient")
    fine = torch.full((4,), 1.0 + 2.0 ** -13)
    same(hvd.allreduce(fine), fine, "fp32 average keeps 2^-13")
    coarse = hvd.allreduce(fine, compression=hvd.Compression.fp16)
    same(coarse, torch.ones(4), "fp16 compression rounds 1+2^-13 to 1")
    g = torch.Generator().manual_seed(r)
    v = torch.randn(1000, generator=g)
    exact = hvd.allreduce(v)
    half = hvd.allreduce(v, compression=hvd.Compression.fp16)
    assert half.dtype == torch.float32
    bound = n * 2.0 ** -10 * float(exact.abs().max() + v.abs().max())
    err = float((half - exact).abs().max())
    assert err <= bound, "fp16 error %g over its bound %g" % (err, bound)
    print("ok gradients and fp16 (error %.2g <= %.2g)" % (err, bound),
          flush=True)


def check_join_refusals(r, n):
    for step in range(r + 2):
        out = hvd.allreduce(torch.ones(3), name="join.%d" % step,
                            op=hvd.Sum)
        assert float(out[0]) >= 1
    last = hvd.join()
    assert last == n - 1, "join: last rank %d, want %d" % (last, n - 1)
    hvd.barrier()
    for bad in (dict(op=hvd.Adasum), dict(op=hvd.Sum, average=True)):
        try:
            hvd.allreduce(torch.ones(2), **bad)
            raise AssertionError("allreduce %s passed" % bad)
        except (NotImplementedError, ValueError):
            pass
    try:
        hvd.allreduce(torch.ones(2, dtype=torch.complex64))
        raise AssertionError("complex allreduce passed")
    except TypeError:
        pass
    print("ok join (last %d) and refusals" % last, flush=True)


def main():
    hvd.init()
    r, n = hvd.rank(), hvd.size()
    assert hvd.is_initialized() and 0 <= r < n
    assert 0 <= hvd.local_rank() < hvd.local_size() <= n
    assert 0 <= hvd.cross_rank() < hvd.cross_size() <= n
    check_allreduce(r, n)
    check_async_grouped(r, n)
    check_allgather_broadcast(r, n)
    check_alltoall(r, n)
    check_reducescatter(r, n)
    check_gradients_compression(r, n)
    check_join_refusals(r, n)
    hvd.shutdown()
    assert not hvd.is_initialized()
    print("collective.torch ops ok", flush=True)


if __name__ == "__main__":
    main()
