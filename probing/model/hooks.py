"""The one way probing changes a running model, and always undoes it.

Every change a pass makes to a model goes through :func:`hooked`, one
context manager over a list of *changes*:

``ForwardHook(module, function)``
    ``function(module, args, output)`` runs after ``module`` (capturing
    weights or value norms, stopping the pass).
``PreForwardHook(module, function)``
    ``function(module, args)`` runs before ``module`` (a new pass begins).
``ReplacedForward(module, forward)``
    ``module`` returns ``forward(*args, **kwargs)`` instead of computing
    (a layer whose output the intact model's pass already recorded).
``AttentionImplementation(model, name, function)``
    Every attention module of ``model`` calls transformers' attention
    function ``name`` (``function`` registered under it first: disabled
    heads), or a built-in one such as ``"eager"``.
``EvalMode(model)``
    Dropout off: every module of ``model`` in eval mode.

Whatever way the block ends (normally, by an error, by ``KeyboardInterrupt``,
by a hook raising :class:`StopPass`), the changes are undone in reverse
order: hook handles removed, replaced forwards given back, the attention
implementation of every config and the training mode of every module what
they were. A change that cannot be made undoes those made before it. Blocks
nest; an inner block's changes are undone first.

A hook that has read all it needs raises :class:`StopPass`; :func:`until_stopped`
runs a forward pass and ends it there quietly.

>>> import torch
>>> layer = torch.nn.Linear(2, 2).train()
>>> seen = []
>>> with hooked(ForwardHook(layer, lambda module, args, output: seen.append(output.shape)), EvalMode(layer)):
...     _ = layer(torch.ones(3, 2))
...     layer.training
False
>>> seen, layer.training, len(layer._forward_hooks)
([torch.Size([3, 2])], True, 0)
"""

from __future__ import annotations

import contextlib
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Protocol, TypeVar

import torch

from probing.errors import ProbingError

T = TypeVar("T")


class StopPass(Exception):
    """Raised by a hook that has what it came for: the rest of the forward pass is not needed."""


def until_stopped(forward: Callable[[], T]) -> T | None:
    """``forward()``'s result, or None when a hook ended the pass with :class:`StopPass`.

    >>> def stops():
    ...     raise StopPass
    >>> until_stopped(lambda: 1), until_stopped(stops)
    (1, None)
    """
    try:
        return forward()
    except StopPass:
        return None


class Change(Protocol):
    """One change to a running model: ``install`` makes it and pushes what undoes it onto ``undo``."""

    def install(self, undo: contextlib.ExitStack) -> None: ...


@contextlib.contextmanager
def hooked(*changes: Change) -> Iterator[None]:
    """Within the block, the model runs with ``changes`` made; afterwards it is exactly as before.

    An ExitStack holds one undo per change, so every undo runs (in reverse
    order) even when the body, a later change or another undo raises.
    """
    with contextlib.ExitStack() as undo:
        for change in changes:
            change.install(undo)
        yield


@dataclass(frozen=True)
class ForwardHook:
    """``function(module, args, output)`` after each call of ``module``."""

    module: torch.nn.Module
    function: Callable

    def install(self, undo: contextlib.ExitStack) -> None:
        undo.callback(self.module.register_forward_hook(self.function).remove)


@dataclass(frozen=True)
class PreForwardHook:
    """``function(module, args)`` before each call of ``module``."""

    module: torch.nn.Module
    function: Callable

    def install(self, undo: contextlib.ExitStack) -> None:
        undo.callback(self.module.register_forward_pre_hook(self.function).remove)


@dataclass(frozen=True)
class ReplacedForward:
    """``module(...)`` returns ``forward(*args, **kwargs)``; its own forward is not run.

    Forward hooks on ``module`` still run (``nn.Module.__call__`` calls the
    instance attribute that shadows the class's ``forward``).
    """

    module: torch.nn.Module
    forward: Callable

    def install(self, undo: contextlib.ExitStack) -> None:
        missing = object()
        own = self.module.__dict__.get("forward", missing)  # an outer block's replacement, if any
        self.module.forward = self.forward
        undo.callback(self._restore, own, missing)

    def _restore(self, own, missing) -> None:
        if own is missing:
            del self.module.forward
        else:
            self.module.forward = own


@dataclass(frozen=True)
class EvalMode:
    """Every module of ``model`` in eval mode (no dropout); each gets its own mode back after."""

    model: torch.nn.Module

    def install(self, undo: contextlib.ExitStack) -> None:
        modes = [(module, module.training) for module in self.model.modules()]
        self.model.eval()
        undo.callback(_restore_modes, modes)


def _restore_modes(modes: list[tuple[torch.nn.Module, bool]]) -> None:
    for module, training in modes:
        module.training = training  # module by module: a model may mix modes (a frozen part in eval)


@dataclass(frozen=True)
class AttentionImplementation:
    """Every attention module of ``model`` runs transformers' attention function ``name``.

    With ``function`` (transformers' signature: ``function(module, query, key,
    value, attention_mask, **kwargs) -> (output, weights)``) it is registered
    under ``name`` first, with eager attention's padding mask, for the block
    only. ``refused`` ends the error of a model that cannot switch; with
    ``strict`` False a model that stays on its own implementation is left to
    the caller, who checks what it returns.
    """

    model: torch.nn.Module
    name: str
    function: Callable | None = None
    refused: str = "its attention cannot be changed without editing the model"
    strict: bool = True
    mask: str = "eager"
    """Whose masks ``function`` is given: eager's additive float masks, or ``"sdpa"``'s (boolean, or None where
    the kernel's own causal flag does the masking)."""

    def install(self, undo: contextlib.ExitStack) -> None:
        if self.function is not None:
            _register(self.name, self.function, undo, self.mask)
        previous = getattr(self.model.config, "_attn_implementation", None)
        if previous == self.name or (previous is None and not self.strict):
            return
        if not callable(getattr(self.model, "set_attn_implementation", None)):
            raise ProbingError(
                f"{type(self.model).__name__} cannot switch its attention implementation ({previous}) while loaded "
                f"(transformers too old?); {self.refused}",
                source="model",
            )
        saved = _implementations(self.model)
        undo.callback(_restore_implementations, self.model, previous, saved)
        _quietly(self.model.set_attn_implementation, self.name)
        if self.strict and self.model.config._attn_implementation != self.name:
            raise ProbingError(
                f"{type(self.model).__name__} computes attention in its own code rather than through transformers' "
                f"AttentionInterface, so {self.refused}",
                source="--model",
            )


def _register(name: str, function: Callable, undo: contextlib.ExitStack, mask: str = "eager") -> None:
    """``function`` under ``name`` in transformers' attention registry for the block; then what was there before,
    else a stand-in that says the block is over (so no finished block's function stays reachable)."""
    from transformers import AttentionInterface
    from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS, AttentionMaskInterface

    registry = AttentionInterface()
    before = registry[name] if name in registry else None

    def finished(module, *args, **kwargs):
        raise RuntimeError(f"the attention function {name!r} was called after the block that installed it ended")

    undo.callback(AttentionInterface.register, name, before or finished)
    AttentionInterface.register(name, function)
    # Without a registered mask function, transformers builds no padding mask for a custom name.
    AttentionMaskInterface.register(name, ALL_MASK_ATTENTION_FUNCTIONS[mask])


def _configs(model: torch.nn.Module) -> list:
    """Every config a model's modules read, sub-configs included (one entry per config object)."""
    found, pending = {}, deque(getattr(module, "config", None) for module in model.modules())
    while pending:  # breadth first: a config comes before its sub-configs, so restoring in order ends exact
        config = pending.popleft()
        if config is None or id(config) in found or not hasattr(config, "_attn_implementation"):
            continue
        found[id(config)] = config
        pending.extend(getattr(config, key, None) for key in getattr(config, "sub_configs", None) or ())
    return list(found.values())


def _implementations(model: torch.nn.Module) -> list[tuple[object, object]]:
    return [(config, config._attn_implementation) for config in _configs(model)]


def _restore_implementations(model: torch.nn.Module, previous, saved: list[tuple[object, object]]) -> None:
    """transformers' own switch back, then each config set to exactly what it held (a model whose parts ran
    different implementations keeps them)."""
    _quietly(model.set_attn_implementation, previous)
    for config, implementation in saved:
        if config._attn_implementation != implementation:
            config._attn_implementation = implementation


def _quietly(function: Callable, *args) -> None:
    """Call without transformers' warning for models that cannot switch (the caller raises a clearer one).

    The warning comes from ``transformers.modeling_utils``; that one logger is switched off for the call.
    Changing a level instead (``set_verbosity``) clears the cache of every logger, about a millisecond with
    transformers' hundreds, and a pass whose gradients or ablation keep the fused path from being held for the
    whole pass switches twice per batch."""
    import logging

    logger = logging.getLogger("transformers.modeling_utils")
    before = logger.disabled
    logger.disabled = True
    try:
        function(*args)
    finally:
        logger.disabled = before


@contextlib.contextmanager
def scoring_mode(model: torch.nn.Module) -> Iterator[torch.nn.Module]:
    """Eval mode and eager attention for the block (what attention passes need); afterwards the
    model's training mode and attention implementation are what they were, even after an error.

    Only eager attention returns the weights; the fused kernels a model is
    trained with (sdpa, flash) never materialise them. Dropout is off inside,
    so scores do not depend on the random state of training.

    >>> from transformers import AutoModelForMaskedLM
    >>> from probing.testing import tiny_bert
    >>> model = AutoModelForMaskedLM.from_pretrained(tiny_bert(), attn_implementation="sdpa").train()
    >>> with scoring_mode(model):
    ...     model.training, model.config._attn_implementation
    (False, 'eager')
    >>> model.training, model.config._attn_implementation
    (True, 'sdpa')
    """
    eager = AttentionImplementation(
        model, "eager", refused="load it with attn_implementation='eager' to score it live", strict=False
    )
    with hooked(eager, EvalMode(model)):
        yield model


def use_eager_attention(model: torch.nn.Module) -> None:
    """At load time, for good: eager attention when loading did not give it (only eager returns the weights),
    and no key/value cache (one forward pass per batch: a cache is wasted memory)."""
    if getattr(model.config, "_attn_implementation", "eager") != "eager":
        try:
            model.set_attn_implementation("eager")
        except (ValueError, AttributeError, NotImplementedError):
            pass  # the load-time probe reports a model that still returns no weights
    if hasattr(model.config, "use_cache"):
        model.config.use_cache = False
