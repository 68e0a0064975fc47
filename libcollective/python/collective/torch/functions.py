"""Horovod's helpers for starting every rank from the same state: the
model's parameters, the optimizer's state, and any picklable object."""
import collections
import io
import pickle

import torch

from .mpi_ops import allgather, broadcast_, rank, size


def broadcast_parameters(params, root_rank):
    """Overwrites every tensor of params with root_rank's: a dict (a
    state_dict), or a list of (name, tensor) pairs or of tensors; the
    ranks take them in name order (a dict) or in list order."""
    if isinstance(params, dict):
        items = sorted(params.items())
    elif isinstance(params, list):
        items = [p if isinstance(p, tuple) else (None, p) for p in params]
    else:
        raise ValueError("invalid params of type: %s" % type(params))
    for _, p in items:
        if p is None:
            continue
        tensor = p.data if isinstance(p, torch.nn.Parameter) else p
        broadcast_(tensor, root_rank)


def _pickled(obj):
    buf = io.BytesIO()
    pickle.dump(obj, buf)
    return torch.frombuffer(bytearray(buf.getvalue()), dtype=torch.uint8)


def broadcast_object(obj, root_rank=0, name=None, process_set=None):
    """root_rank's obj (pickled) on every rank."""
    if rank() == root_rank:
        data = _pickled(obj)
        length = torch.tensor([data.numel()], dtype=torch.int64)
    else:
        length = torch.zeros(1, dtype=torch.int64)
    broadcast_(length, root_rank)
    if rank() != root_rank:
        data = torch.empty(int(length.item()), dtype=torch.uint8)
    broadcast_(data, root_rank)
    return obj if rank() == root_rank else pickle.loads(data.numpy().tobytes())


def allgather_object(obj, name=None, process_set=None):
    """Every rank's obj (pickled), in rank order."""
    data = _pickled(obj)
    lengths = allgather(torch.tensor([data.numel()], dtype=torch.int64))
    everything = allgather(data).numpy().tobytes()
    out, at = [], 0
    for k in range(size()):
        n = int(lengths[k])
        out.append(pickle.loads(everything[at:at + n]))
        at += n
    return out


def _materialize_state(optimizer):
    """An optimizer that has not stepped yet has no state: one step with
    zero gradients makes it (without a DistributedOptimizer's allreduce)."""
    for group in optimizer.param_groups:
        for p in group["params"]:
            if p.requires_grad and p.grad is None:
                p.grad = torch.zeros_like(p)
    step = getattr(optimizer, "_local_step", None) or optimizer.step
    step()


def broadcast_optimizer_state(optimizer, root_rank):
    """Makes every rank's optimizer state (its tensors, such as Adam's
    moments and SGD's momentum buffers, and its scalars) and its
    param_groups' options root_rank's."""
    if isinstance(optimizer, torch.optim.LBFGS):
        raise ValueError("cannot broadcast torch.optim.LBFGS state")
    state_dict = optimizer.state_dict()
    if len(state_dict["state"]) == 0:
        _materialize_state(optimizer)
        state_dict = optimizer.state_dict()
    if len(state_dict["state"]) == 0:
        return
    tensors = collections.OrderedDict()
    scalars = collections.OrderedDict()
    # the options of every group, by position
    for index, group in enumerate(state_dict["param_groups"]):
        for key, value in sorted(group.items()):
            if key != "params":
                scalars["%s.%d" % (key, index)] = value
    # every parameter's state, keyed by its group, its place and the name
    for index, group in enumerate(state_dict["param_groups"]):
        for pid in group["params"]:
            for key, value in sorted(state_dict["state"].get(pid, {}).items()):
                full = "%d.%s.%s" % (index, pid, key)
                if torch.is_tensor(value):
                    tensors[full] = value
                else:
                    scalars[full] = value
    broadcast_parameters(list(tensors.items()), root_rank)
    scalars = broadcast_object(scalars, root_rank)
    for index, group in enumerate(state_dict["param_groups"]):
        for key in list(group):
            if key != "params" and "%s.%d" % (key, index) in scalars:
                group[key] = scalars["%s.%d" % (key, index)]
        for pid in group["params"]:
            for key in list(state_dict["state"].get(pid, {})):
                full = "%d.%s.%s" % (index, pid, key)
                if full in tensors:
                    state_dict["state"][pid][key] = tensors[full]
                elif full in scalars:
                    state_dict["state"][pid][key] = scalars[full]
    optimizer.load_state_dict(state_dict)
