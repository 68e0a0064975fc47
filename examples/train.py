"""Data-parallel SGD with libcollective: logistic regression on a
synthetic data set, sharded by rank. Every step averages the gradient
across ranks; the loss must fall and the weights must be identical on
every rank after every step (checked, exit 1 otherwise).

    hvdrun -np 4 -H localhost:4 python3 examples/train.py
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "libcollective", "python"))
import collective  # noqa: E402


def data_set(n=8192, d=32, seed=7):
    """The same synthetic data on every rank: labels from a hidden model."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, d)).astype(np.float32)
    w_true = rng.normal(size=d).astype(np.float32)
    p = 1 / (1 + np.exp(-x @ w_true))
    y = (rng.random(n) < p).astype(np.float32)
    return x, y


def main():
    comm = collective.Comm()
    x, y = data_set()
    x, y = x[comm.rank::comm.size], y[comm.rank::comm.size]  # this shard
    w = np.random.default_rng(comm.rank).normal(size=x.shape[1])
    w = comm.broadcast(w.astype(np.float32), root=0)  # one start for all
    first = last = None
    for step in range(60):
        p = 1 / (1 + np.exp(-x @ w))
        grad = x.T @ (p - y) / len(y)
        w = w - 0.5 * comm.allreduce(grad.astype(np.float32), op="avg")
        eps = 1e-7
        local = -np.sum(y * np.log(p + eps) + (1 - y) * np.log(1 - p + eps))
        sums = comm.allreduce(np.array([local, len(y)], dtype=np.float64))
        loss = sums[0] / sums[1]
        first = loss if first is None else first
        last = loss
        everyone = comm.allgather(w)
        if not np.array_equal(everyone.min(axis=0), everyone.max(axis=0)):
            print(f"step {step}: weights differ between ranks", flush=True)
            return 1
        if comm.rank == 0 and step % 10 == 0:
            print(f"step {step:2d} loss {loss:.4f}", flush=True)
    if comm.rank == 0:
        print(f"loss {first:.4f} -> {last:.4f} on {comm.size} ranks, "
              f"weights identical on every rank", flush=True)
    comm.close()
    return 0 if last < 0.9 * first else 1


if __name__ == "__main__":
    sys.exit(main())
