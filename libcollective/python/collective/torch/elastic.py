"""Horovod's elastic API (horovod.torch.elastic) on libcollective's rounds.

    @hvd.elastic.run
    def train(state):
        for state.epoch in range(state.epoch, epochs):
            ...
            state.commit()

    state = hvd.elastic.TorchState(model, optimizer, epoch=0)
    train(state)

When a worker fails, the others' next collective raises
HorovodInternalError: run() rolls the state back to the last commit,
joins the job's next round (coll_reset: new rank and size, new
transports) and calls the function again. When the launcher adds hosts,
commit() (check_host_updates) raises HostsUpdatedInterrupt on every rank
at the same step and the state in memory is kept. After either, the state
is broadcast from rank 0 (a survivor whenever there is one) when any rank
of the new round needs it: a new worker, or a rank that rolled back. All
ranks of a round take that decision together, so none waits in a
broadcast the others skip (Horovod #3494, #2652).
"""
import copy
import ctypes
import functools
import sys

import torch

from collective._lib import lib

from .functions import (broadcast_object, broadcast_optimizer_state,
                        broadcast_parameters)
from .mpi_ops import (HorovodInternalError, Max, _check, _comm, _State,
                      allreduce, rank, size)

__all__ = ["run", "State", "ObjectState", "TorchState", "ElasticSampler",
           "HostsUpdatedInterrupt", "HorovodInternalError", "current_round"]

_COLL_EREMOVED = -9


class HostsUpdatedInterrupt(RuntimeError):
    """The job's hosts changed (raised by commit/check_host_updates on
    every rank at once). skip_sync: Horovod's field; here the sync after
    the reset is decided by the new round itself."""

    def __init__(self, skip_sync=False):
        super().__init__("the job's hosts changed")
        self.skip_sync = skip_sync


class State:
    """What a training function keeps across rounds: subclasses say how
    to save (commit), restore and sync it."""

    def __init__(self, bcast_object=broadcast_object, get_rank=rank,
                 **kwargs):
        self._bcast_object = bcast_object
        self._rank = get_rank
        self._reset_callbacks = []

    def register_reset_callbacks(self, callbacks):
        """Functions called after every reset (a new round), in order:
        e.g. to scale the learning rate to the new size."""
        self._reset_callbacks.extend(callbacks)

    def on_reset(self):
        for callback in self._reset_callbacks:
            callback()

    def commit(self):
        """Saves the state (the point a failure rolls back to), then
        checks for added or removed hosts."""
        self.save()
        self.check_host_updates()

    def check_host_updates(self):
        """Raises HostsUpdatedInterrupt on every rank when the job has
        started a round after this one. Rank 0 asks hvdd and tells the
        others, so that all raise at the same step or none does."""
        changed = ctypes.c_int(0)
        if self._rank() == 0 and lib.coll_round_changed(
                _comm(), ctypes.byref(changed)) != 0:
            # hvdd did not answer: no change seen, not a failure of the
            # ranks (which would make them all wait for a round nobody
            # starts); the next commit asks again
            print("collective: cannot ask hvdd for the job's round: %s" %
                  lib.coll_last_error(_comm()).decode(errors="replace"),
                  file=sys.stderr)
            changed.value = 0
        if self._bcast_object(changed.value, root_rank=0):
            raise HostsUpdatedInterrupt(False)

    def save(self):
        raise NotImplementedError()

    def restore(self):
        raise NotImplementedError()

    def sync(self):
        raise NotImplementedError()


class ObjectState(State):
    """Picklable values kept as attributes: ObjectState(epoch=0, batch=0);
    sync broadcasts them from rank 0."""

    def __init__(self, bcast_object=broadcast_object, get_rank=rank,
                 **kwargs):
        self._saved_state = kwargs
        self._set_attrs()
        super().__init__(bcast_object=bcast_object, get_rank=get_rank)

    def save(self):
        self._saved_state = {attr: copy.deepcopy(getattr(self, attr))
                             for attr in self._saved_state}

    def restore(self):
        self._set_attrs()

    def sync(self):
        if self._saved_state:
            self._saved_state = self._bcast_object(self._saved_state,
                                                   root_rank=0)
            self._set_attrs()

    def _set_attrs(self):
        for attr, value in self._saved_state.items():
            setattr(self, attr, copy.deepcopy(value))


class ElasticSampler(torch.utils.data.Sampler):
    """Horovod's: the epoch's shuffled order of the dataset, split among
    this round's ranks, without the samples processed so far (counted by
    record_batch): after a change of ranks the rest of the epoch is split
    among the new ones, and no sample is seen twice or skipped."""

    def __init__(self, dataset, shuffle=True, seed=0):
        self.dataset, self.shuffle, self.seed = dataset, shuffle, seed
        self.epoch = 0
        self.processed_num = 0
        self.reset()

    def set_epoch(self, epoch):
        self.epoch = epoch
        self.processed_num = 0
        self.reset()

    def record_batch(self, batch_idx, batch_size):
        """A batch of batch_size samples done on every rank."""
        self.processed_num += batch_size * self.num_replicas

    def record_indices(self, indices):
        self.processed_num += len(indices) * self.num_replicas

    def reset(self):
        """Splits what is left of the epoch among this round's ranks."""
        self.num_replicas, self.rank = size(), rank()
        n = len(self.dataset)
        if self.shuffle:
            g = torch.Generator()
            g.manual_seed(self.seed + self.epoch)
            order = torch.randperm(n, generator=g).tolist()
        else:
            order = list(range(n))
        left = order[min(self.processed_num, n):]
        self.num_samples = -(-len(left) // self.num_replicas)
        total = self.num_samples * self.num_replicas
        left += left[:total - len(left)]  # padded, as DistributedSampler
        self.indices = left[self.rank:total:self.num_replicas]

    def __iter__(self):
        return iter(self.indices)

    def __len__(self):
        return self.num_samples

    def state_dict(self):
        return {"epoch": self.epoch, "processed_num": self.processed_num}

    def load_state_dict(self, state):
        self.epoch = state["epoch"]
        self.processed_num = state["processed_num"]
        self.reset()


class _ModelHandler:
    """What a commit keeps of an object with a state_dict: a copy."""

    def __init__(self, model):
        self.value = model
        self.save()

    def save(self):
        self._saved = copy.deepcopy(self.value.state_dict())

    def restore(self):
        self.value.load_state_dict(self._saved)

    def sync(self):
        broadcast_parameters(self.value.state_dict(), root_rank=0)

    def set_value(self, value):
        self.value = value
        self.save()


class _SamplerHandler(_ModelHandler):
    """An ElasticSampler's position (its state_dict), as a model's."""

    def sync(self):
        self.value.load_state_dict(broadcast_object(self.value.state_dict(),
                                                    root_rank=0))


class _OptimizerHandler(_ModelHandler):
    def sync(self):
        broadcast_optimizer_state(self.value, root_rank=0)


class TorchState(ObjectState):
    """A model's and an optimizer's state (state_dict copies in memory at
    each commit), ElasticSamplers' (given by any name) and any picklable
    values (epoch=..., batch=...)."""

    def __init__(self, model=None, optimizer=None, **kwargs):
        handlers = {}
        if model is not None:
            handlers["model"] = _ModelHandler(model)
        if optimizer is not None:
            handlers["optimizer"] = _OptimizerHandler(optimizer)
        for name in [k for k, v in kwargs.items()
                     if isinstance(v, ElasticSampler)]:
            handlers[name] = _SamplerHandler(kwargs.pop(name))
        object.__setattr__(self, "_handlers", handlers)
        for name, handler in handlers.items():
            object.__setattr__(self, name, handler.value)
        super().__init__(bcast_object=broadcast_object, get_rank=rank,
                         **kwargs)

    def __setattr__(self, name, value):
        handlers = self.__dict__.get("_handlers", {})
        if name in handlers:
            handlers[name].set_value(value)
        object.__setattr__(self, name, value)

    def save(self):
        for handler in self._handlers.values():
            handler.save()
        super().save()

    def restore(self):
        for handler in self._handlers.values():
            handler.restore()
        super().restore()

    def sync(self):
        # the optimizer first: a fresh one takes a step of zeros to make
        # its state, which may move the parameters the model's sync then
        # overwrites
        for name in ("optimizer", "model"):
            if name in self._handlers:
                self._handlers[name].sync()
        for name, handler in self._handlers.items():
            if name not in ("optimizer", "model"):
                handler.sync()
        super().sync()

    def on_reset(self):
        # the samplers split the rest of the epoch among the new ranks,
        # also when nothing was synced
        for handler in self._handlers.values():
            if isinstance(handler, _SamplerHandler):
                handler.value.reset()
        super().on_reset()


def current_round():
    """The job's round this worker is in (0: the first); ours, not
    Horovod's."""
    return lib.coll_round(_comm())


def _reset():
    """Joins the next round; exits this process (0) when it is not in
    it: the launcher gave its slot away or its host is blacklisted."""
    with _State.lock:
        _State.handles.clear()
    code = lib.coll_reset(_comm())
    if code == _COLL_EREMOVED:
        detail = lib.coll_last_error(_comm()).decode(errors="replace")
        print("collective: this worker is not in the job's new round (%s): "
              "exiting" % detail, file=sys.stderr)
        sys.exit(0)
    _check(code)


def _needs_sync(rolled_back):
    """Every rank's answer, the same: whether the new round has new
    workers or any rank rolled back to its last commit."""
    mine = 1 if rolled_back or lib.coll_round_fresh(_comm()) == 1 else 0
    return allreduce(torch.tensor([mine], dtype=torch.int32), op=Max,
                     name="elastic.sync").item() > 0


def run(func):
    """Horovod's decorator: func(state, ...) runs, and runs again in the
    next round after a failure (state rolled back to its last commit) or
    a change of hosts (state kept), until it returns."""

    @functools.wraps(func)
    def wrapper(state, *args, **kwargs):
        # the job's first round: every rank starts from rank 0's state, no
        # question asked; in a later one, every rank asks the others
        # (a worker started for it needs the state)
        first = lib.coll_round(_comm()) <= 0
        needs = True
        while True:
            try:
                if first or _needs_sync(needs):
                    state.sync()
                first = False
                return func(state, *args, **kwargs)
            except HorovodInternalError:
                # also a failure of the agreement or of the sync: this
                # round is over too, and the state is the last commit's
                state.restore()
                needs = True
            except HostsUpdatedInterrupt:
                needs = False
            first = False
            _reset_again()
            state.on_reset()

    return wrapper


def _reset_again(tries=3):
    """_reset, again when joining the round failed (a newer round started
    meanwhile, or a peer of the new one died before it connected)."""
    for attempt in range(tries):
        try:
            return _reset()
        except HorovodInternalError:
            if attempt == tries - 1:
                raise
