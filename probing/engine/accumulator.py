"""What an analysis adds up over a pass: the :class:`Accumulator` protocol, and the :class:`BatchView` it sees.

The pass (probing.engine.passes) hands each batch's attention to a list of
accumulators: the probe's counts, the surface statistics, head divergences,
pattern shares, tree counts, coreference counts, ... Each implements one
protocol:

- ``update(view)``: add one batch (``view`` is a :class:`BatchView`: the
  batch, its token attention under the chosen reading, and the word
  attention and head predictions computed once for all accumulators);
- ``merge(other)``: add another part's accumulator (shards, processes,
  resumed runs);
- ``state()`` / ``load_state(state)``: every number it holds, as tensors,
  for checkpoints (``merge``, ``state`` and ``load_state`` come from the one
  count base, probing.engine.counts);
- ``result()``: the analysis's payload in a result file.

What an accumulator reads decides how much of the model's attention a pass
holds at once (``reads``): ``"attention"``, the token attention of every
layer (``view.attention``); ``"predictions"``, only each head's predicted
heads (``view.predictions``), which the pass makes one layer at a time as the
layer's attention exists; ``"layers"``, one layer's token attention at a time
(``update_layer``, then ``update_batch`` once per batch). When no accumulator
of a pass reads ``"attention"``, the pass holds one layer's token attention,
never the model's: for a 2,048-token unit through a 30-layer, 9-head model,
151 MB instead of 4.5 GB in float32.
"""

from __future__ import annotations

import copy
from functools import cached_property

import torch

from probing.engine.batching import Batch
from probing.engine.counts import Counts
from probing.engine.pooling import WordPooling
from probing.engine.predictions import HeadPrediction
from probing.model.loading import LoadedModel


class Accumulator(Counts):
    """What an analysis adds up over a pass (see the module docstring for the protocol).

    ``merge``, ``state`` and ``load_state`` are :class:`probing.engine.counts.Counts`': by default over the
    tensors of ``self.state_tensors`` (a dict of tensors that add up), with ``identity`` as the options two parts
    must share; an accumulator that keeps its counts in count objects names them in ``count_parts``. ``fresh`` works
    for accumulators that keep every number in ``state_tensors`` and everything else in options that never
    change.
    ``needs_attention`` False means the accumulator runs the model itself
    (ablation, gradients): the pass then skips its own forward pass.
    """

    analysis = ""
    needs_attention = True
    reads = "attention"
    """``"attention"`` (every layer's token attention), ``"predictions"`` or ``"layers"`` (module docstring)."""

    def __init__(self) -> None:
        self.state_tensors: dict[str, torch.Tensor] = {}

    def prepare(self, batch: Batch) -> dict:
        """What this accumulator can make from a batch's units alone, before the model runs: made on the input
        side (the batching thread, or a ``--workers`` process) and found in ``batch.prepared`` under the
        returned keys (a key names what was made, so accumulators that need the same share it). Default:
        nothing."""
        return {}

    def update(self, view: "BatchView") -> None:
        """Add one batch (every layer of ``view``). An accumulator that reads ``"layers"`` gets it as
        ``update_layer`` for each layer, then ``update_batch``."""
        if self.reads != "layers":
            raise NotImplementedError
        for layer in range(view.attention.shape[1]):
            self.update_layer(view.layer(layer), layer)
        self.update_batch(view)

    def update_layer(self, view: "BatchView", layer: int) -> None:
        """Add one layer of one batch: ``view.attention`` [batch, 1, head, query, key] is layer ``layer``."""
        raise NotImplementedError

    def update_batch(self, view: "BatchView") -> None:
        """After every layer of a batch: what is counted once per batch (``view.attention`` may be None)."""

    def identity(self) -> dict:
        """The options that decide this accumulator's numbers (checkpoints refuse others)."""
        return {"analysis": self.analysis}

    identity_options: dict[str, str] = {}
    """A key of :meth:`identity` -> the command-line options that decide it, which a refused merge of parts that
    differ there names (``"selection": "--select-on"``)."""

    # -- counts (probing.engine.counts): every number in ``state_tensors``, options in ``identity`` ---------------

    @property
    def counts_name(self) -> str:
        return f"{self.analysis} counts"

    def count_values(self) -> dict:
        return self.state_tensors

    def set_count(self, name: str, value) -> None:
        self.state_tensors[name] = value

    def count_options(self) -> dict:
        return self.identity()

    def fresh(self) -> "Accumulator":
        """An empty accumulator with the same options."""
        empty = copy.copy(self)
        empty.state_tensors = {name: torch.zeros_like(tensor) for name, tensor in self.state_tensors.items()}
        return empty

    def result(self) -> dict:
        """The analysis's payload; the default is its encoded state, from which merges rebuild it."""
        return {"state": self.encoded_state()}

    def encoded_state(self) -> dict:
        from probing.results.schema.arrays import encode_array

        return {name: encode_array(tensor.numpy()) for name, tensor in self.state().items()}

    @classmethod
    def from_result(cls, result: dict) -> "Accumulator":
        """The accumulator a (validated) result file was made from, for ``probing merge``."""
        from probing.results.schema.arrays import decode_array

        accumulator = cls.for_result(result)
        return accumulator.load_state({name: torch.from_numpy(decode_array(encoded).copy())
                                       for name, encoded in result["state"].items()})

    @classmethod
    def for_result(cls, result: dict) -> "Accumulator":
        """An empty accumulator with the options a result file records."""
        raise NotImplementedError(f"{cls.__name__} cannot be rebuilt from a result file")


class BatchView:
    """One batch as the accumulators see it; derived tensors are computed once, on first use.

    ``attention``: float32 [batch, layer, head, query, key] under the pass's
    reading (None when no accumulator needs it); ``word_attention``: [batch,
    layer, head, word, word]; ``predictions``: long [batch, direction, layer,
    head, word].
    """

    def __init__(self, batch: Batch, attention: torch.Tensor | None, loaded: LoadedModel, pool_from: str = "mean",
                 reading: str = "weights", shared: dict | None = None):
        self.batch, self.attention, self.loaded, self.pool_from = batch, attention, loaded, pool_from
        self.reading = reading
        self._shared = {} if shared is None else shared  # what the batch's layer views share: pooling, masks

    def layer(self, index: int) -> "BatchView":
        """The view of one layer: attention [batch, 1, head, query, key]."""
        return self.of_layer(self.attention[:, index : index + 1])

    def of_layer(self, attention: torch.Tensor) -> "BatchView":
        """A view of the same batch holding one layer's ``attention`` [batch, 1, head, query, key]; its
        pooling maps and prediction masks are made once for all the batch's layers."""
        return BatchView(self.batch, attention, self.loaded, self.pool_from, self.reading, self._shared)

    @cached_property
    def word_attention(self) -> torch.Tensor:
        if "pooling" not in self._shared:
            self._shared["pooling"] = WordPooling(self.batch.word_of_token, self.pool_from)
        return self._shared["pooling"](self.attention)

    @cached_property
    def predictions(self) -> torch.Tensor:
        if "prediction" not in self._shared:
            self._shared["prediction"] = HeadPrediction(self.batch.num_words)
        return self._shared["prediction"](self.word_attention)
