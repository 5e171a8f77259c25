"""The passes of ``probing coref``: documents cut into windows, a DEV pass where a head is chosen on DEV, the
held-out block of the head DEV chose; :class:`CorefChoosing` hands them to the one held-out sequence
(:class:`probing.stats.heldout.HeldOut`).

The window is a run of whole sentences of one document that fits ``--window`` tokens; every pass (DEV's too)
reads the same windows. DEV is a treebank (scored here, without bootstrap) or a finished coref result file.

>>> class Model:
...     name = "m"
...     def max_length(self, requested):
...         return requested or 512
>>> window_length(None, None, Model()), window_length(128, None, Model())
(512, 128)
>>> window_length(1000, 256, Model())
Traceback (most recent call last):
probing.errors.ProbingError: --window: 1000 tokens is more than the longest unit allowed (256, --max-length)
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from probing.analyses.coref.accumulator import CorefAccumulator
from probing.analyses.coref.report import arrays_of, choice_summary, choose_head, heldout_block, select_on_block
from probing.data.inputs import InputSource
from probing.engine.batching import window_rule
from probing.errors import ProbingError
from probing.stats.heldout import Choosing, HeldOut, check_dev_test


def window_length(requested: int | None, max_length: int | None, loaded) -> int:
    """The window length: ``--window``, at most the longest unit the model reads (or ``--max-length``)."""
    limit = loaded.max_length(max_length)
    if requested is None:
        return limit
    if requested < 2:  # the window becomes the pass's longest unit: said here, about the option the user gave
        raise ProbingError(f"must be at least 2 tokens, got {requested}", source="--window")
    if requested > limit:
        where = "--max-length" if max_length is not None else f"{loaded.name}'s limit"
        raise ProbingError(f"{requested} tokens is more than the longest unit allowed ({limit}, {where})",
                           source="--window")
    return requested


@dataclass
class WindowPasses:
    """Passes over windows of one length through ``engine_run`` (a probing.engine.run.EngineRun: the model, the
    pass options, checkpoints and processes); ``option``: the option that set the length (``--window`` when given;
    a pass where no sentence fits names it)."""

    engine_run: object
    window: int
    option: str | None = None

    def run(self, source: InputSource, accumulator: CorefAccumulator, description: str, **changes):
        loaded = self.engine_run.loaded
        source.windows = window_rule(loaded.tokenizer, self.window, prepend=loaded.prepend_token_id)
        return self.engine_run.run([accumulator], description, source=source, max_length=self.window,
                                   length_option=self.option, **changes)

    def dev_result(self, dev_source: InputSource, *, heads: int, config: dict) -> dict:
        """DEV scored whole (no shard, no bootstrap): the result a head is chosen on."""
        dev = CorefAccumulator(self.engine_run.loaded.num_layers, heads, window=self.window)
        stats = self.run(dev_source, dev, "selecting on DEV", shard=None)
        return self.engine_run.result("coref", stats, dev, config, source=dev_source, shard=None)


def require_mentions(test: CorefAccumulator, source: InputSource) -> None:
    """A treebank without coreference brackets is refused (every count would be 0)."""
    if int(test.state_tensors["mentions"][0]) == 0:
        raise ProbingError("holds no coreference mention (no Entity= brackets in MISC); coreference needs a "
                           "CorefUD treebank such as en_gum", source=str(source.path))


@dataclass
class CorefChoosing(Choosing):
    """Coreference's choice and report for :class:`~probing.stats.heldout.HeldOut`: DEV scored over the same
    windows as TEST (or its coref result file read), the head with the best all-mentions accuracy on it, and TEST's
    counts by type with that head's held-out block. ``options`` are a CorefOptions, ``passes`` the PassOptions,
    ``engine_run`` the run whose model both passes share (None while only DEV's file is read)."""

    dev_analysis = "coref"
    options: object
    passes: object
    seed: int
    engine_run: object = None

    @cached_property
    def windows(self) -> WindowPasses:
        """The passes over windows of ``--window`` tokens (at most the model's longest unit)."""
        length = window_length(self.options.window, self.passes.max_length, self.engine_run.loaded)
        return WindowPasses(self.engine_run, length, "--window" if self.options.window is not None else None)

    @property
    def heads(self) -> int:
        from probing.engine.readings import READINGS

        return READINGS[self.passes.attention].heads(self.engine_run.loaded.num_heads)

    @property
    def config(self) -> dict:
        return {"window": self.windows.window, "bootstrap": self.options.bootstrap}

    def choose(self, held: HeldOut, loaded) -> dict:
        return self.windows.dev_result(held.dev_source, heads=self.heads, config=self.config)

    def report(self, chosen, held: HeldOut, loaded) -> dict | None:
        windows = self.windows
        test = CorefAccumulator(loaded.num_layers, self.heads, window=windows.window, bootstrap=self.options.bootstrap,
                                seed=self.seed)
        stats = windows.run(held.source, test, "coreference")
        if self.passes.shard is None:
            require_mentions(test, held.source)
        if not self.engine_run.is_main:
            return None
        return self.engine_run.result("coref", stats, test, self.config)

    def attach(self, result: dict, chosen: dict, held: HeldOut) -> dict:
        """The head DEV chose (its all-mentions accuracy), reported on ``result``'s counts by type with intervals."""
        check_dev_test(chosen, result, source=held.where)
        dev_arrays = arrays_of(chosen)
        where = select_on_block(chosen, result_path=held.result_path, spec=held.select_on)
        result["heldout"] = heldout_block(result, where, choice_summary(choose_head(dev_arrays), dev_arrays))
        return result
