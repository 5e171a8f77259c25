"""The passes of ``probing coref``: documents cut into windows, a DEV pass where a head is chosen on DEV, the
held-out block of the head DEV chose.

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

from probing.analyses.coref.accumulator import CorefAccumulator
from probing.analyses.coref.report import arrays_of, choice_summary, choose_head, heldout_block, select_on_block
from probing.data.inputs import InputSource
from probing.engine.batching import window_rule
from probing.errors import ProbingError
from probing.stats.heldout import HeldOut, check_dev_test, read_dev_result


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


def coref_inputs(treebank: str | None, select_on: str | None, *, limit: int | None) -> HeldOut:
    """``--treebank`` and ``--select-on`` through the one held-out flow (:class:`probing.stats.heldout.HeldOut`):
    both read as documents, DEV a treebank to score or a finished coref result file."""
    return HeldOut.plan(treebank, select_on, limit=limit, units=InputSource.documents,
                        read_dev=lambda path: read_dev_result(path, analysis="coref"))


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


def add_heldout(result: dict, dev_result: dict, inputs: HeldOut) -> None:
    """The head DEV chose (its all-mentions accuracy), reported on ``result``'s counts by type with intervals."""
    check_dev_test(dev_result, result, source=inputs.where)
    dev_arrays = arrays_of(dev_result)
    chosen = choice_summary(choose_head(dev_arrays), dev_arrays)
    from_file = inputs.select_on if inputs.dev_source is None else None
    where = select_on_block(dev_result, result_path=from_file, spec=inputs.select_on)
    result["heldout"] = heldout_block(result, where, chosen)
