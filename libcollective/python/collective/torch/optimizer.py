"""Horovod's DistributedOptimizer: each gradient is queued for an
allreduce as soon as backward has produced it (a hook on the parameter's
gradient accumulator), libcollective's background thread fuses and
reduces them while backward goes on, and step() waits for them before
the wrapped optimizer's step."""
import contextlib
import warnings

import torch

from .compression import Compression
from .mpi_ops import (Adasum, Average, allreduce_async_, global_process_set,
                      size, synchronize)


class _DistributedOptimizer(torch.optim.Optimizer):
    def __init__(self, params, named_parameters, compression,
                 backward_passes_per_step, op, gradient_predivide_factor):
        super(self.__class__, self).__init__(params)
        self._compression = compression
        self._op = op
        self._predivide = gradient_predivide_factor
        all_params = [p for group in self.param_groups
                      for p in group["params"]]
        if named_parameters is not None:
            named_parameters = list(named_parameters)
            if any(not isinstance(p, tuple) for p in named_parameters):
                raise ValueError("named_parameters should be a sequence of "
                                 "(name, parameter) tuples, usually "
                                 "model.named_parameters()")
            names = [n for n, _ in named_parameters]
            if len(set(names)) != len(names):
                raise ValueError("parameter names in named_parameters must "
                                 "be unique")
            known = {id(p) for _, p in named_parameters}
            missing = [p for p in all_params if id(p) not in known]
            if missing:
                raise ValueError("named_parameters was given, but %d of the "
                                 "optimizer's parameters are not in it"
                                 % len(missing))
            self._names = {p: n for n, p in named_parameters}
        else:
            self._names = {p: "noname.%d.%d" % (g, i)
                           for g, group in enumerate(self.param_groups)
                           for i, p in enumerate(group["params"])}
        self.backward_passes_per_step = backward_passes_per_step
        self._delay = {p: backward_passes_per_step for p in all_params}
        self._handles = {}
        self._accumulators = []
        self._synchronized = False
        self._should_synchronize = True
        if size() > 1:
            self._register_hooks(all_params)

    def _local_step(self, closure=None):
        """The wrapped optimizer's own step, without any allreduce."""
        return super(self.__class__, self).step(closure)

    def set_backward_passes_per_step(self, passes):
        self.backward_passes_per_step = passes
        for p in self._delay:
            self._delay[p] = passes

    def _register_hooks(self, params):
        for p in params:
            if not p.requires_grad:
                continue
            # the accumulator that adds this parameter's gradient: its hook
            # runs once .grad holds this pass's sum
            acc = p.expand_as(p).grad_fn.next_functions[0][0]
            acc.register_hook(self._make_hook(p))
            self._accumulators.append(acc)

    def _scales(self):
        if self._op == Average:
            # the library averages; Horovod's predivide splits it in two
            return 1.0 / self._predivide, self._predivide
        return 1.0, 1.0

    def _allreduce_grad(self, p):
        compressed, ctx = self._compression.compress(p.grad)
        pre, post = self._scales()
        handle = allreduce_async_(compressed, name=self._names[p],
                                  op=self._op, prescale_factor=pre,
                                  postscale_factor=post)
        return handle, (compressed, ctx)

    def _make_hook(self, p):
        def hook(*ignored):
            if p in self._handles and self._handles[p][0] is not None:
                if self._delay[p] <= 0:
                    raise AssertionError(
                        "Gradients were computed more than "
                        "backward_passes_per_step times before call to "
                        "step(). Increase backward_passes_per_step to "
                        "accumulate gradients locally.")
            self._delay[p] -= 1
            handle, ctx = None, None
            if self._delay[p] == 0:
                handle, ctx = self._allreduce_grad(p)
            self._handles[p] = (handle, ctx)
        return hook

    def synchronize(self):
        """Waits for every gradient's allreduce (starting those backward
        did not reach), and puts the results in .grad."""
        for group in self.param_groups:
            for p in group["params"]:
                if not p.requires_grad or size() == 1:
                    continue
                if p.grad is None:
                    p.grad = torch.zeros_like(p)
                if p not in self._handles or self._handles[p][0] is None:
                    self._handles[p] = self._allreduce_grad(p)
        for p, (handle, (compressed, ctx)) in list(self._handles.items()):
            out = synchronize(handle)
            self._delay[p] = self.backward_passes_per_step
            p.grad.set_(self._compression.decompress(out, ctx).to(
                p.grad.dtype))
        self._handles.clear()
        self._synchronized = True

    @contextlib.contextmanager
    def skip_synchronize(self):
        """For step() after an explicit synchronize() (gradient clipping):
        step() does not synchronize again."""
        self._should_synchronize = False
        try:
            yield
        finally:
            self._should_synchronize = True

    def step(self, closure=None):
        if self._should_synchronize:
            if self._synchronized:
                warnings.warn(
                    "optimizer.step() called without "
                    "optimizer.skip_synchronize() context after "
                    "optimizer.synchronize(). This can cause training "
                    "slowdown. You may want to consider using "
                    "optimizer.skip_synchronize() context if you use "
                    "optimizer.synchronize() in your code.")
            self.synchronize()
        self._synchronized = False
        return self._local_step(closure)

    def zero_grad(self, *args, **kwargs):
        if any(h[0] is not None for h in self._handles.values()):
            raise AssertionError(
                "optimizer.zero_grad() was called after loss.backward() "
                "but before optimizer.step() or optimizer.synchronize(). "
                "This is prohibited as it can cause a race condition.")
        return super(self.__class__, self).zero_grad(*args, **kwargs)

    def load_state_dict(self, *args, **kwargs):
        self._handles.clear()
        self.set_backward_passes_per_step(self.backward_passes_per_step)
        return super(self.__class__, self).load_state_dict(*args, **kwargs)


def DistributedOptimizer(optimizer, named_parameters=None,
                         compression=Compression.none,
                         backward_passes_per_step=1, op=Average,
                         gradient_predivide_factor=1.0, num_groups=0,
                         groups=None, sparse_as_dense=False,
                         process_set=global_process_set):
    """Wraps optimizer (its class and param_groups) so that step()
    averages the gradients across ranks first, as horovod.torch's does.
    groups/num_groups are accepted and left to libcollective's fusion."""
    if op == Adasum:
        raise NotImplementedError("Adasum is not supported by libcollective")
    if gradient_predivide_factor != 1.0 and op != Average:
        raise ValueError("gradient_predivide_factor not supported with op "
                         "!= Average")
    if backward_passes_per_step <= 0:
        raise ValueError("backward_passes_per_step must be > 0")
    if process_set is not global_process_set and process_set is not None:
        raise NotImplementedError("only the global process set exists")
    cls = type(optimizer.__class__.__name__, (optimizer.__class__,),
               dict(_DistributedOptimizer.__dict__))
    return cls(optimizer.param_groups, named_parameters, compression,
               backward_passes_per_step, op, gradient_predivide_factor)
