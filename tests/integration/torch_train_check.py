"""Test worker for collective.torch's training helpers: DistributedOptimizer
on N ranks against one process training on the concatenated batch
(computed here, in the same process, with no collective), and the
helpers that start every rank from rank 0's state. Prints "ok <what>"
per part; raises (exit 1) at the first wrong result.

    hvdrun -np 3 /usr/bin/python3 torch_train_check.py
"""
import copy
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.environ["COLLECTIVE_PY"])
import collective.torch as hvd  # noqa: E402

ROWS = 8  # per rank and step
STEPS = 5


def model(seed=0):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(),
                               torch.nn.Linear(16, 3))


def batches(n, seed=1):
    """The global batches, the same on every rank."""
    g = torch.Generator().manual_seed(seed)
    return [(torch.randn(ROWS * n, 8, generator=g),
             torch.randint(0, 3, (ROWS * n,), generator=g))
            for _ in range(STEPS)]


def max_diff(a, b):
    return max(float((p - q).abs().max())
               for p, q in zip(a.parameters(), b.parameters()))


def sgd(params):
    return torch.optim.SGD(params, lr=0.1, momentum=0.9)


def train_pair(r, n, passes=1, loss_scale=1.0, clip=None, **options):
    """(distributed model, reference model) after STEPS steps."""
    ours, ref = model(), model()
    opt = hvd.DistributedOptimizer(sgd(ours.parameters()),
                                   named_parameters=ours.named_parameters(),
                                   backward_passes_per_step=passes,
                                   **options)
    ref_opt = sgd(ref.parameters())
    for x, y in batches(n):
        mine_x, mine_y = x[r * ROWS:(r + 1) * ROWS], y[r * ROWS:(r + 1) * ROWS]
        opt.zero_grad()
        part = ROWS // passes
        for k in range(passes):
            sl = slice(k * part, (k + 1) * part)
            F.cross_entropy(ours(mine_x[sl]), mine_y[sl]).backward()
        if clip is None:
            opt.step()
        else:
            opt.synchronize()
            torch.nn.utils.clip_grad_norm_(ours.parameters(), clip)
            with opt.skip_synchronize():
                opt.step()
        ref_opt.zero_grad()
        (passes * loss_scale * F.cross_entropy(ref(x), y)).backward()
        if clip is not None:
            torch.nn.utils.clip_grad_norm_(ref.parameters(), clip)
        ref_opt.step()
    return ours, ref


def check_equivalence(r, n):
    untrained = model()
    for what, tol, kw in (
            ("SGD", 1e-5, {}),
            ("predivide 4", 1e-5, dict(gradient_predivide_factor=4.0)),
            ("op=Sum", 1e-5, dict(op=hvd.Sum, loss_scale=float(n))),
            ("backward_passes_per_step=2", 1e-5, dict(passes=2)),
            ("synchronize, clip, skip_synchronize", 1e-5, dict(clip=0.3)),
            ("fp16 compression", 5e-3,
             dict(compression=hvd.Compression.fp16))):
        ours, ref = train_pair(r, n, **kw)
        diff = max_diff(ours, ref)
        moved = max_diff(ref, untrained)
        assert moved > 5e-3, "%s: the reference did not train" % what
        assert diff <= tol, "%s: %g from one process on the whole batch " \
            "(tolerance %g)" % (what, diff, tol)
        print("ok %s: %.2g from one process (moved %.2g)" % (what, diff, moved),
              flush=True)


def check_misuse(r, n):
    net = model()
    opt = hvd.DistributedOptimizer(sgd(net.parameters()),
                                   named_parameters=net.named_parameters())
    x, y = batches(n)[0]
    F.cross_entropy(net(x), y).backward()
    if n > 1:
        try:
            opt.zero_grad()
            raise AssertionError("zero_grad between backward and step passed")
        except AssertionError as e:
            assert "zero_grad" in str(e), e
        try:
            F.cross_entropy(net(x), y).backward()
            raise AssertionError("two backward passes with "
                                 "backward_passes_per_step=1 passed")
        except AssertionError as e:
            assert "backward_passes_per_step" in str(e), e
    opt.step()
    try:
        hvd.DistributedOptimizer(sgd(net.parameters()),
                                 named_parameters=[("a", p) for p in
                                                   net.parameters()])
        raise AssertionError("duplicate parameter names passed")
    except ValueError:
        pass
    print("ok misuse refused", flush=True)


def state_of(opt):
    """Every tensor and number of opt's state and groups, flattened."""
    sd = opt.state_dict()
    flat = []
    for pid in sorted(sd["state"]):
        for key in sorted(sd["state"][pid]):
            v = sd["state"][pid][key]
            flat.append(v.flatten().double() if torch.is_tensor(v)
                        else torch.tensor([float(v)], dtype=torch.float64))
    for group in sd["param_groups"]:
        flat.append(torch.tensor([float(group["lr"])], dtype=torch.float64))
    return torch.cat(flat)


def check_broadcast_state(r, n):
    for name, make in (
            ("Adam", lambda p: torch.optim.Adam(p, lr=1e-3 * (r + 1))),
            ("SGD momentum", lambda p: torch.optim.SGD(
                p, lr=0.01 * (r + 1), momentum=0.5 + 0.1 * r))):
        net = model(seed=10 + r)
        opt = make(net.parameters())
        g = torch.Generator().manual_seed(20 + r)
        for _ in range(r + 1):  # a different history on every rank
            opt.zero_grad()
            F.cross_entropy(net(torch.randn(4, 8, generator=g)),
                            torch.randint(0, 3, (4,), generator=g)).backward()
            opt.step()
        hvd.broadcast_parameters(net.state_dict(), root_rank=0)
        hvd.broadcast_optimizer_state(opt, root_rank=0)
        flat = torch.cat([p.detach().flatten().double()
                          for p in net.parameters()] + [state_of(opt)])
        every = hvd.allgather(flat.unsqueeze(0))
        for k in range(n):
            assert torch.equal(every[k], every[0]), \
                "%s: rank %d's state is not rank 0's" % (name, k)
        if name == "Adam":
            assert float(opt.param_groups[0]["lr"]) == 1e-3
        # a fresh optimizer has no state yet: it gets rank 0's all the same
        fresh = make(model(seed=30 + r).parameters())
        hvd.broadcast_optimizer_state(fresh, root_rank=0)
        lrs = hvd.allgather(torch.tensor([fresh.param_groups[0]["lr"]],
                                         dtype=torch.float64))
        assert bool((lrs == lrs[0]).all()), "fresh %s: lr %s" % (name, lrs)
        print("ok broadcast_optimizer_state %s" % name, flush=True)


def check_join(r, n):
    """Rank r has r + 2 batches: the others join early, give zeros to the
    allreduces of the rest, and take the last one's weights, as Horovod's
    scripts do."""
    net = model()
    opt = hvd.DistributedOptimizer(sgd(net.parameters()),
                                   named_parameters=net.named_parameters())
    x, y = batches(n)[0]
    for step in range(r + 2):
        opt.zero_grad()
        F.cross_entropy(net(x[:ROWS] + step), y[:ROWS]).backward()
        opt.step()
    last = hvd.join()
    assert last == n - 1, "join: last %d" % last
    hvd.broadcast_parameters(net.state_dict(), root_rank=last)
    flat = torch.cat([p.detach().flatten() for p in net.parameters()])
    every = hvd.allgather(flat.unsqueeze(0))
    for k in range(n):
        assert torch.equal(every[k], every[0]), "join: rank %d differs" % k
    print("ok join with uneven batches (last %d)" % last, flush=True)


def main():
    hvd.init()
    r, n = hvd.rank(), hvd.size()
    check_equivalence(r, n)
    check_misuse(r, n)
    check_broadcast_state(r, n)
    check_join(r, n)
    hvd.shutdown()
    print("collective.torch training ok", flush=True)


if __name__ == "__main__":
    main()
