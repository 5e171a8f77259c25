"""One pass for the explore page: the probe (unless a probe result is given), the no-op test, the sentence views.

The no-op test reads each relation's chosen head from the probe result, this pass's or the given one; a given
result must be of this very model and treebank, since its heads are shown beside this pass's views.

>>> check_same({"model": {"fingerprint": "a", "name_or_path": "m"}, "treebank": {"sha256": "s"}},
...            {"fingerprint": "b"}, sha256="s")
Traceback (most recent call last):
probing.errors.ProbingError: --result: was made with other weights (m) than --model
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from probing.analyses.noop.accumulator import NoopAccumulator, chosen_heads
from probing.analyses.probe.accumulator import ProbeAccumulator
from probing.analyses.probe.api import pass_config, probe_result
from probing.analyses.probe.counts import OFFSETS
from probing.analyses.views.accumulator import SentenceViews
from probing.analyses.views.figure import write_views
from probing.engine.readings import READINGS
from probing.errors import ProbingError
from probing.naming import WORDS, head_name
from probing.report.page import render_page, sentence_block
from probing.stats.intervals import bootstrap_block


def check_same(given: dict, model: dict, *, sha256: str) -> None:
    """A ``--result`` must be of this model (``model``: its model block) and this treebank (its sha256)."""
    if given["model"].get("fingerprint") != model["fingerprint"]:
        raise ProbingError(f"was made with other weights ({given['model'].get('name_or_path')}) than --model",
                           source="--result")
    if given["treebank"]["sha256"] != sha256:
        raise ProbingError("was scored on another treebank than --treebank (its sha256 differs)", source="--result")


@dataclass
class ExploreRun:
    """The accumulators of one explore pass and what is made of them."""

    relations: list[str]
    given: dict | None
    """A probe result read from ``--result`` (then no probe runs), or None."""
    probe: ProbeAccumulator | None
    noop: NoopAccumulator
    views: SentenceViews

    @classmethod
    def create(cls, loaded, relations: Sequence[str], *, given: dict | None, attention: str, bootstrap: int,
               seed: int, sentences: int) -> "ExploreRun":
        heads = READINGS[attention].heads(loaded.num_heads)
        probe = None if given else ProbeAccumulator.create(
            relations, loaded.num_layers, heads, offsets=OFFSETS, bootstrap=bootstrap, seed=seed,
            causal=loaded.is_causal)
        noop = NoopAccumulator(relations, loaded.num_layers, heads, bootstrap=bootstrap, seed=seed)
        return cls(list(relations), given, probe, noop, SentenceViews(loaded.num_layers, heads, sentences=sentences))

    def accumulators(self) -> list:
        return [accumulator for accumulator in (self.probe, self.noop, self.views) if accumulator is not None]

    def results(self, engine_run, stats, *, random_init: bool, bootstrap: int, seed: int,
                chosen_from: str) -> tuple[dict, dict]:
        """The probe result (the given one, or this pass's as ``probing score`` records it:
        probing.analyses.probe.api.probe_result) and the no-op result of the heads it chose, from the pass of
        ``engine_run`` (a probing.engine.run.EngineRun, which adds the common blocks)."""
        probe = self.given or probe_result(engine_run, stats, self.probe, pass_config(
            engine_run, relations=self.relations, random_init=random_init, bootstrap=bootstrap, seed=seed))
        self.noop.chosen = chosen_heads(probe)
        noop = engine_run.result("noop", stats, self.noop, {"relations": self.relations,
                                                            "bootstrap": bootstrap_block(bootstrap, seed),
                                                            "chosen_from": chosen_from})
        return probe, noop

    def page(self, probe: dict, noop: dict, source, *, surface: dict | None, others: list[dict],
             command_line: str) -> tuple[str, list[dict]]:
        """The page's HTML, and the kept sentences it shows (read again from the treebank)."""
        sentences = kept_sentences(source, self.views.kept(), self.relations)
        page = render_page(probe, noop=noop, views=self.views.payload(), sentences=sentences, surface=surface,
                           others=others, command=command_line)
        return page, sentences

    def write_views(self, folder: str, sentences: list[dict]) -> list[Path]:
        """Each relation's chosen head in the kept sentences that have a pair of that relation (all kept ones if
        none), as SVG and PNG in ``folder``."""
        written, payload = [], self.views.payload()
        for relation, choice in self.noop.chosen.items():
            if choice is None:
                continue
            values = payload["heads"][f"{choice['layer']}-{choice['head']}"]
            picked = ([n for n, sentence in enumerate(sentences) if sentence["pairs"].get(relation)]
                      or list(range(len(sentences))))
            name = f"{relation}-{choice['layer'] + 1}-{choice['head'] + 1}"
            title = (f"{relation}: head {head_name(choice['layer'], choice['head'])} ({choice['selection']}), "
                     f"{WORDS[choice['direction']]}")
            written += write_views(folder, name, [sentences[n] for n in picked],
                                   [values[n] for n in picked], relation, choice["direction"], title)
        return written


def kept_sentences(source, indices: list[int], relations: Sequence[str]) -> list[dict]:
    """The kept units' sentences, read again from the treebank by index."""
    wanted, found = set(indices), {}
    for unit in source.units():
        if unit.index in wanted:
            found[unit.index] = sentence_block(unit.sentence, unit.index, relations)
        if len(found) == len(wanted):
            break
    return [found[index] for index in indices]
