"""One rank of the PyTorch training-step benchmark (tests/bench/torch):
torchvision's ResNet-18 (weights=None, 11.7 M parameters) on small random
images, SGD with momentum, gradients averaged either by
collective.torch's DistributedOptimizer (ours) or by PyTorch's own
DistributedDataParallel on its gloo backend (ddp). Rank 0 prints the
median step time in microseconds.

    hvdrun -np 2 /usr/bin/python3 tests/bench/torch_step.py ours 20
"""
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F
import torchvision

BATCH, WARMUP = 16, 3


def main():
    mode, steps = sys.argv[1], int(sys.argv[2])
    torch.set_num_threads(1)  # the ranks share the host's cores
    torch.manual_seed(0)
    model = torchvision.models.resnet18(weights=None, num_classes=10)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    if mode == "ours":
        sys.path.insert(0, os.path.join(os.path.dirname(
            os.path.abspath(__file__)), "..", "..", "libcollective", "python"))
        import collective.torch as hvd
        hvd.init()
        rank = hvd.rank()
        hvd.broadcast_parameters(model.state_dict(), root_rank=0)
        opt = hvd.DistributedOptimizer(
            opt, named_parameters=model.named_parameters())
        done = hvd.shutdown
    else:
        import torch.distributed as dist
        dist.init_process_group("gloo", init_method="env://")
        rank = dist.get_rank()
        model = torch.nn.parallel.DistributedDataParallel(model)
        done = dist.destroy_process_group
    g = torch.Generator().manual_seed(rank)
    x = torch.randn(BATCH, 3, 32, 32, generator=g)
    y = torch.randint(0, 10, (BATCH,), generator=g)
    times = []
    for step in range(WARMUP + steps):
        t0 = time.perf_counter()
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()
        if step >= WARMUP:
            times.append(time.perf_counter() - t0)
    done()
    if rank == 0:
        print("step_us %d" % int(statistics.median(times) * 1e6))


if __name__ == "__main__":
    main()
