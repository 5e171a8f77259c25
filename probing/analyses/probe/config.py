"""One frozen, validated description of a scoring run; written into every result.

>>> config = ScoreConfig(relations=("det", "nsubj"), batch_size=8).validated()
>>> config.relations, config.pool_from
(('det', 'nsubj'), 'mean')
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from probing.analyses.probe.counts import OFFSETS
from probing.data.relations import DEFAULT_RELATIONS, check_relation_names
from probing.engine.pooling import check_from_pooling
from probing.errors import ProbingError
from probing.stats.intervals import bootstrap_block


@dataclass(frozen=True)
class ScoreConfig:
    """Everything that decides a run's counts, plus how it is executed.

    ``model`` None means the packaged all-MiniLM-L6-v2; ``treebank`` None means
    the project's sample treebank. ``shard`` is ``(index, count)``. ``stack``
    picks the self-attention of an encoder-decoder model (None: its encoder;
    see docs/families.md); ``attention`` how attention is read (weights,
    norms, rollout).
    """

    model: str | None = None
    treebank: str | None = None
    relations: tuple[str, ...] = DEFAULT_RELATIONS
    offsets: tuple[int, ...] = OFFSETS
    pool_from: str = "mean"
    max_length: int | None = None
    batch_size: int = 32
    workers: int = 0
    device: str = "cpu"
    device_map: str | None = None
    dtype: str = "float32"
    revision: str | None = None
    limit: int | None = None
    bootstrap: int = 1000
    seed: int = 0
    random_init: bool = False
    trust_remote_code: bool = False
    shard: tuple[int, int] | None = None
    stack: str | None = None
    attention: str = "weights"
    extra: dict = field(default_factory=dict, compare=False)

    def validated(self) -> "ScoreConfig":
        """Check every option once, before anything is loaded; return self."""
        check_relation_names(list(self.relations))
        check_from_pooling(self.pool_from)
        _positive(self.batch_size, "--batch-size")
        if self.limit is not None:
            _positive(self.limit, "--limit")
        if self.bootstrap < 0:
            raise ProbingError(f"must be 0 (off) or a number of replicates, got {self.bootstrap}", source="--bootstrap")
        if 0 in self.offsets or len(set(self.offsets)) != len(self.offsets):
            raise ProbingError("offsets must be distinct and non-zero", source="--offsets")
        if self.stack not in (None, "encoder", "decoder"):
            raise ProbingError(f"must be encoder or decoder, got {self.stack!r}", source="--stack")
        from probing.engine.options import check_shard
        from probing.engine.readings import READINGS

        READINGS[self.attention]
        check_shard(self.shard)
        return self

    @classmethod
    def of(cls, model, inputs, passes, options) -> "ScoreConfig":
        """The config of the specs of a run: a ModelSpec, an InputSpec, PassOptions and ProbeOptions
        (probing.analyses.probe.options), by the one translation from their fields."""
        from probing.engine.arguments import spec_from

        fields = {**vars(model), **vars(inputs), **vars(passes), **vars(options)}
        return spec_from(cls, fields, relations=tuple(options.relations))

    def replace(self, **changes) -> "ScoreConfig":
        return dataclasses.replace(self, **changes)

    def as_result_dict(self) -> dict:
        """The ``config`` object of a result file (docs/results.md)."""
        return {
            "relations": list(self.relations),
            "offsets": list(self.offsets),
            "pooling": {"to": "sum", "from": self.pool_from},
            "max_length": self.max_length,
            "batch_size": self.batch_size,
            "limit": self.limit,
            "bootstrap": bootstrap_block(self.bootstrap, self.seed),
            "random_init": self.random_init,
            "shard": None if self.shard is None else {"index": self.shard[0], "count": self.shard[1]},
            "attention": self.attention,
            **self.extra,
        }


def _positive(value: int, option: str) -> None:
    if value < 1:
        raise ProbingError(f"must be a positive integer, got {value}", source=option)
