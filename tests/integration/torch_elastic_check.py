"""Test worker for collective.torch.elastic: a small model trained with
DistributedOptimizer in hvd.elastic.run, committing every batch. At batch
10 the workers wait (at commit points) for round 1, at batch 20 for round
2, which the test starts (elastic.sh's way: hvdd's /v1/round); they stop
at batch 30. Prints "rank R of N joined round K at batch B" when a
round's training starts on this worker and, at the end, "done: rank R of
N, round K, batch B, params S" (S: the parameters' sum, which must be the
same on every rank).

    python3 torch_elastic_check.py MARK
"""
import ctypes
import os
import sys
import time

import torch

sys.path.insert(0, os.environ["COLLECTIVE_PY"])
import collective.torch as hvd  # noqa: E402
from collective._lib import lib  # noqa: E402
from collective.torch.mpi_ops import _comm  # noqa: E402

WAITS = {10: 1, 20: 2}  # batch: the round to wait for there
END = 30


def job_round():
    return lib.coll_round(_comm())


def wait_for_round(state, want, until):
    if job_round() < want:
        print("rank %d waits at batch %d for round %d" %
              (hvd.rank(), state.batch, want), flush=True)
    while job_round() < want:
        if time.monotonic() > until:
            raise SystemExit("round %d never came" % want)
        state.check_host_updates()  # raises once the round is there
        time.sleep(0.05)


hvd.init()
torch.manual_seed(1000 + os.getpid())  # every worker starts different
model = torch.nn.Linear(4, 1)
optimizer = hvd.DistributedOptimizer(
    torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9),
    named_parameters=model.named_parameters())
state = hvd.elastic.TorchState(model, optimizer, batch=0)
until = time.monotonic() + 150


@hvd.elastic.run
def train(state):
    print("rank %d of %d joined round %d at batch %d" %
          (hvd.rank(), hvd.size(), job_round(), state.batch), flush=True)
    while state.batch < END:
        if state.batch in WAITS:
            wait_for_round(state, WAITS[state.batch], until)
        x = torch.arange(32, dtype=torch.float32).reshape(8, 4) / 32
        x = x + hvd.rank() + state.batch / 100
        optimizer.zero_grad()
        model(x).pow(2).mean().backward()
        optimizer.step()
        state.batch += 1
        state.commit()


train(state)
total = sum(float(p.sum()) for p in model.parameters())
print("done: rank %d of %d, round %d, batch %d, params %.6f" %
      (hvd.rank(), hvd.size(), job_round(), state.batch, total), flush=True)
hvd.shutdown()
