"""One frozen, validated description of a scoring run, written into every result: the specs of its model, input
and pass and the probe's own options, each option declared once by the spec that owns it.

>>> config = ScoreConfig.from_fields(relations=("det", "nsubj"), batch_size=8, limit=5).validated()
>>> config.options.relations, config.passes.batch_size, config.inputs.limit, config.passes.pool_from
(('det', 'nsubj'), 8, 5, 'mean')
>>> config.replace(limit=9, seed=2).inputs.limit, config.replace(seed=2).model.seed
(9, 2)
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from probing.analyses.probe.counts import OFFSETS
from probing.analyses.probe.options import ProbeOptions
from probing.data.relations import check_relation_names
from probing.engine.options import PassOptions
from probing.engine.specs import InputSpec, ModelSpec
from probing.errors import ProbingError
from probing.stats.intervals import bootstrap_block

PARTS = {"model": ModelSpec, "inputs": InputSpec, "passes": PassOptions, "options": ProbeOptions}
"""The specs a probe run is made of, by the name of the ScoreConfig field that holds each."""


@dataclass(frozen=True)
class ScoreConfig:
    """Everything that decides a run's counts, plus how it is executed: ``model`` (which checkpoint, its dtype,
    device, seed, ...), ``inputs`` (the treebank, ``limit``), ``passes`` (batching, the attention reading, the
    shard), ``options`` (the relations, ``select_on``, the bootstrap) and the positional baselines' ``offsets``,
    the one setting of a probe run that is no option of the command line.

    ``model.model`` None means the packaged all-MiniLM-L6-v2; ``inputs.treebank`` None the project's sample treebank.
    """

    model: ModelSpec = field(default_factory=ModelSpec)
    inputs: InputSpec = field(default_factory=InputSpec)
    passes: PassOptions = field(default_factory=PassOptions)
    options: ProbeOptions = field(default_factory=ProbeOptions)
    offsets: tuple[int, ...] = OFFSETS

    @classmethod
    def from_fields(cls, **fields) -> "ScoreConfig":
        """The config of ``fields`` named as the options are (``limit``, ``batch_size``, ``relations``, ...), each
        given to the spec that declares it; a name no spec declares is refused (a TypeError, as a dataclass
        refuses an unknown keyword)."""
        return cls().replace(**fields)

    def replace(self, **changes) -> "ScoreConfig":
        """This config with ``changes`` by option name (``treebank=``, ``bootstrap=0``, ``shard=None``), each made
        in the spec that declares it."""
        own = {"offsets": tuple(changes.pop("offsets"))} if "offsets" in changes else {}
        parts: dict[str, dict] = {}
        for name, value in changes.items():
            owner = _owner(name)
            if owner is None:
                raise TypeError(f"ScoreConfig has no option {name!r}")
            parts.setdefault(owner, {})[name] = value
        return dataclasses.replace(self, **own, **{owner: dataclasses.replace(getattr(self, owner), **found)
                                                   for owner, found in parts.items()})

    def validated(self) -> "ScoreConfig":
        """Check every option the specs do not check themselves, once, before anything is loaded; return self.
        (PassOptions checks its own fields as it is made; the command line's and probing.run's readings check each
        option's type and choices, which a config made in Python has not been through.)"""
        from probing.engine.readings import READINGS
        from probing.model.choices import STACKS

        check_relation_names(list(self.options.relations))
        if self.inputs.limit is not None and self.inputs.limit < 1:
            raise ProbingError(f"must be a positive integer, got {self.inputs.limit}", source="--limit")
        if self.options.bootstrap < 0:
            raise ProbingError(f"must be 0 (off) or a number of replicates, got {self.options.bootstrap}",
                               source="--bootstrap")
        if 0 in self.offsets or len(set(self.offsets)) != len(self.offsets):
            raise ProbingError("offsets must be distinct and non-zero", source="--offsets")
        if self.model.stack not in (None, *STACKS):
            raise ProbingError(f"must be encoder or decoder, got {self.model.stack!r}", source="--stack")
        READINGS[self.passes.attention]
        return self

    def as_result_dict(self) -> dict:
        """The ``config`` object of a result file (docs/results.md)."""
        shard = self.passes.shard
        return {
            "relations": list(self.options.relations),
            "offsets": list(self.offsets),
            "pooling": {"to": "sum", "from": self.passes.pool_from},
            "max_length": self.passes.max_length,
            "batch_size": self.passes.batch_size,
            "limit": self.inputs.limit,
            "bootstrap": bootstrap_block(self.options.bootstrap, self.model.seed),
            "random_init": self.model.random_init,
            "shard": None if shard is None else {"index": shard[0], "count": shard[1]},
            "attention": self.passes.attention,
        }


def _owner(name: str) -> str | None:
    """The ScoreConfig field whose spec declares option ``name`` (None: no spec does)."""
    return next((part for part, spec in PARTS.items()
                 if name in {found.name for found in dataclasses.fields(spec) if found.init}), None)
