"""The no-op test: do words that have nothing to do park their attention on special tokens?

Clark et al. (2019, section 3 and Figure 5) read attention to [SEP] as a
"no-op": a head that tracks a relation sends the dependents of that relation
to their heads, and every other word, which has nothing to look for, to
[SEP]. If they are right, the share of attention that goes to special tokens
is much larger from the words that are *not* dependents of a head's relation
than from those that are.

Per relation, layer and head this accumulator adds up, over the words of
every sentence, each word's share of attention that goes

- to special tokens ([CLS], [SEP], ``<s>``, ``</s>``, a decoder's sink token), and
- to punctuation words (UPOS ``PUNCT``, or a form made of punctuation characters only),

separately for the words that are dependents of the relation (the words whose
head the probe scores: the ``'s`` clitic for ``poss``, the noun for ``pobj``),
for its head words (the word each dependent must find), and for all words;
the other words' sums are differences. A ``dep_to_head`` head is right when
a dependent attends to its head, so its test compares the dependents with
the other words; a ``head_to_dep`` head is right when the head word attends
to its dependent (a preposition to its object), so its test compares the
head words with the other words. A word's row is
pooled from its pieces' rows as the probe pools them (``--pool-from``), with
each special token kept as a pseudo-word column; under a reading whose rows
do not sum to 1 (``--attention norms``) token rows are first divided by their
sum, so a share is a share of what arrives. Poisson bootstrap replicates of
every sum (weights seeded by sentence index, the probe's own replicates)
give percentile intervals for the shares and their paired difference
"others minus dependents".

The heads the test is reported for are each relation's chosen head (chosen
on dev when the probe result is held-out, else its in-sample best); every
head's shares are kept, and per layer the mean over heads.

>>> import torch
>>> from probing.data.treebank import Sentence
>>> s = Sentence(words=("she", "ate", "it", "."), heads=(1, -1, 1, 1), labels=("nsubj", "root", "obj", "punct"),
...              upos=("PRON", "VERB", "PRON", "PUNCT"))
>>> noop = NoopAccumulator(("dobj",), 1, 1, bootstrap=0, seed=0)
>>> shares = torch.tensor([[0.1, 0.8, 0.2, 0.6], [0.0, 0.1, 0.1, 0.3]]).view(1, 2, 1, 1, 4)  # [batch, target, l, h, word]
>>> noop.add(shares, [s], [0])
>>> block = noop.result()["noop"]["relations"]["dobj"]
>>> block["heads"]["dependents"]["special"], block["heads"]["non_dependents"]["special"]
([[0.2]], [[0.5]])
>>> block["heads"]["heads"]["special"], block["words"]
([[0.8]], {'dependents': 1, 'non_dependents': 3, 'heads': 1, 'non_heads': 3})
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from probing.analyses.noop.report import ATTENDING, GROUPS, TARGETS, chosen_heads  # noqa: F401  (torch-free, shared)
from probing.analyses.probe.pairs import collect_pairs
from probing.data.treebank import Sentence
from probing.engine.accumulator import Accumulator, BatchView
from probing.engine.token_roles import pooled_rows, punctuation_words
from probing.naming import head_name
from probing.stats.bootstrap import poisson_weights
from probing.stats.intervals import LEVEL, finite_interval

DECIMALS = 6

DEFINITIONS = {
    "special": "share of a word's attention that goes to special tokens ([CLS], [SEP], <s>, </s>, a sink token)",
    "punctuation": "share of a word's attention that goes to punctuation words (UPOS PUNCT, or only punctuation "
                   "characters), the word itself included when it is one",
    "dependents": "the words whose head the probe scores for the relation (the 's clitic for poss, the noun for pobj)",
    "non_dependents": "every other word of the same sentences",
    "heads": "the words that are the head in one of the relation's pairs (the preposition for pobj)",
    "non_heads": "every other word of the same sentences",
}


def word_shares(view: BatchView) -> torch.Tensor:
    """float32 [batch, target, layer, head, word]: each word's share of attention to special tokens and to
    punctuation words (see the module docstring); 0 for padding words."""
    words, specials = pooled_rows(view)
    punctuation = punctuation_words(view.batch.sentences, words.shape[-1]).to(words.device)  # [batch, word]
    to_special = specials.sum(dim=-1)  # [batch, layer, head, word]
    to_punctuation = torch.einsum("blhqk,bk->blhq", words, punctuation)
    return torch.stack([to_special, to_punctuation], dim=1)


def relation_masks(sentences: Sequence[Sentence], relations: Sequence[str], width: int) -> dict[str, torch.Tensor]:
    """float [batch, relation, word] masks: ``dependent`` marks each word the relation scores (a pair's query
    word), ``head`` each word that is the head in one of its pairs (the word the query must find)."""
    masks = {role: torch.zeros((len(sentences), len(relations), width)) for role in ROLES}
    pairs = collect_pairs(sentences, relations)  # the batch's pairs at once (array operations, no word loop)
    masks["dependent"][pairs.row, pairs.relation, pairs.query] = 1.0
    has_head = pairs.target >= 0  # ROOT is no word
    masks["head"][pairs.row[has_head], pairs.relation[has_head], pairs.target[has_head]] = 1.0
    return masks


ROLES = ("dependent", "head")
"""The words of a relation whose attention is summed apart: its dependents and its head words."""


class NoopAccumulator(Accumulator):
    """Sums of the special and punctuation shares per relation, layer and head: over the relation's dependents,
    over its head words, and over all words (the other words' sums are differences).

    State (float64): ``dependent_sum`` and ``head_sum`` [relation, target, layer, head], ``word_sum`` [target,
    layer, head], ``dependent_words`` and ``head_words`` [relation], ``words`` and ``sentences`` (scalars); with
    a bootstrap the same sums per replicate (``boot_`` + name, a leading axis of B replicates).
    """

    analysis = "noop"

    def __init__(self, relations: Sequence[str], num_layers: int, num_heads: int, *, bootstrap: int, seed: int,
                 chosen: dict | None = None, level: float = LEVEL):
        super().__init__()
        self.relations, self.num_layers, self.num_heads = tuple(relations), num_layers, num_heads
        self.bootstrap, self.seed, self.level = bootstrap, seed, level
        self.chosen: dict[str, dict | None] = dict(chosen or {})
        relation_count, grid = len(self.relations), (len(TARGETS), num_layers, num_heads)
        shapes = {"dependent_sum": (relation_count, *grid), "head_sum": (relation_count, *grid), "word_sum": grid,
                  "dependent_words": (relation_count,), "head_words": (relation_count,), "words": ()}
        self.state_tensors = {name: torch.zeros(shape, dtype=torch.float64) for name, shape in shapes.items()}
        self.state_tensors["sentences"] = torch.zeros((), dtype=torch.float64)
        if bootstrap:
            self.state_tensors.update({f"boot_{name}": torch.zeros((bootstrap, *shape), dtype=torch.float64)
                                       for name, shape in shapes.items()})

    def identity(self) -> dict:
        return {"analysis": self.analysis, "relations": list(self.relations), "bootstrap": self.bootstrap,
                "seed": self.seed, "shape": [self.num_layers, self.num_heads]}

    def update(self, view: BatchView) -> None:
        self.add(word_shares(view), view.batch.sentences, view.batch.indices)

    def add(self, shares: torch.Tensor, sentences: Sequence[Sentence], indices: Sequence[int]) -> None:
        """Add one batch: ``shares`` float [batch, target, layer, head, word] of these sentences."""
        shares = shares.double().cpu()
        width = shares.shape[-1]
        real = torch.zeros((len(sentences), width), dtype=torch.float64)  # [batch, word]
        for row, sentence in enumerate(sentences):
            real[row, : len(sentence)] = 1.0
        masks = relation_masks(sentences, self.relations, width)  # role -> [batch, relation, word]
        per_sentence = {"word_sum": torch.einsum("btlhw,bw->btlh", shares, real), "words": real.sum(dim=-1)}
        for role in ROLES:
            mask = masks[role].double()
            per_sentence[f"{role}_sum"] = torch.einsum("btlhw,brw->brtlh", shares, mask)
            per_sentence[f"{role}_words"] = mask.sum(dim=-1)  # [batch, relation]
        state = self.state_tensors
        for name, values in per_sentence.items():
            state[name] += values.sum(dim=0)
        state["sentences"] += len(sentences)
        if self.bootstrap:
            weights = poisson_weights(indices, replicates=self.bootstrap, seed=self.seed)  # [B, batch]
            for name, values in per_sentence.items():
                state[f"boot_{name}"] += torch.tensordot(weights, values, dims=1)

    def merge(self, other: "NoopAccumulator") -> "NoopAccumulator":
        super().merge(other)
        if other.chosen != self.chosen:
            # Parts that chose differently (in-sample choices of shards) report no chosen head; per-head numbers stay.
            self.chosen = {name: choice if other.chosen.get(name) == choice else None
                           for name, choice in self.chosen.items()}
        return self

    @classmethod
    def for_result(cls, result: dict) -> "NoopAccumulator":
        block = result["noop"]
        chosen = {name: _choice_of(entry.get("chosen")) for name, entry in block["relations"].items()}
        return cls(list(block["relations"]), result["model"]["num_layers"], block["num_heads"],
                   bootstrap=block["replicates"], seed=block["seed"], chosen=chosen, level=block["level"])

    def result(self) -> dict:
        return {"noop": noop_block(self), "state": self.encoded_state()}


def _choice_of(entry: dict | None) -> dict | None:
    if not entry:
        return None
    return {key: entry[key] for key in ("layer", "head", "direction", "selection")}


def _group_sums(state: dict, r: int, boot: bool) -> dict:
    """Group -> (sums [target, layer, head], count, replicate sums [B, ...] or None, replicate counts [B] or None)."""
    prefix = ("boot_",) if boot else ()
    groups = {}
    for role, group, rest in (("dependent", "dependents", "non_dependents"), ("head", "heads", "non_heads")):
        sums, count = state[f"{role}_sum"][r], float(state[f"{role}_words"][r])
        groups[group] = (sums, count) + ((state[f"boot_{role}_sum"][:, r], state[f"boot_{role}_words"][:, r])
                                         if prefix else (None, None))
        groups[rest] = (state["word_sum"] - sums, float(state["words"]) - count) + (
            (state["boot_word_sum"] - state[f"boot_{role}_sum"][:, r],
             state["boot_words"] - state[f"boot_{role}_words"][:, r]) if prefix else (None, None))
    return groups


def noop_block(noop: NoopAccumulator) -> dict:
    """The ``noop`` payload: every head's shares per group, per-layer means with intervals, each chosen head
    with intervals."""
    state = {name: tensor.numpy() for name, tensor in noop.state().items()}
    relations = {}
    for r, name in enumerate(noop.relations):
        groups = _group_sums(state, r, noop.bootstrap > 0)
        shares = {group: (sums / count if count > 0 else None) for group, (sums, count, _, _) in groups.items()}
        replicates = {group: _replicate_shares(boot_sums, boot_counts) for group, (_, _, boot_sums, boot_counts)
                      in groups.items()} if noop.bootstrap else None
        relations[name] = {
            "words": {group: int(round(count)) for group, (_, count, _, _) in groups.items()},
            "heads": {group: {target: _rounded(None if shares[group] is None else shares[group][t])
                              for t, target in enumerate(TARGETS)} for group in GROUPS},
            "layers": _layers(shares, replicates, noop.level),
            "chosen": _chosen(noop.chosen.get(name), shares, replicates, noop.level),
        }
    return {
        "num_heads": noop.num_heads,
        "targets": list(TARGETS),
        "groups": list(GROUPS),
        "definitions": DEFINITIONS,
        "words": int(round(float(state["words"]))),
        "sentences": int(round(float(state["sentences"]))),
        "replicates": noop.bootstrap,
        "seed": noop.seed,
        "level": noop.level,
        "relations": relations,
    }


def _replicate_shares(sums: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """[B, target, layer, head] shares of every replicate; NaN in replicates that drew no word of the group."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(counts[:, None, None, None] > 0, sums / counts[:, None, None, None], np.nan)


def _layers(shares: dict, replicates: dict | None, level: float) -> dict:
    """Per group and target: the mean over heads of every layer, with its interval."""
    layers = {}
    for group in GROUPS:
        values = shares[group]
        boot = None if replicates is None or values is None else replicates[group].mean(axis=-1)  # [B, target, layer]
        layers[group] = {
            target: None if values is None else [
                {"share": round(float(values[t, layer].mean()), DECIMALS),
                 "interval": None if boot is None else finite_interval(boot[:, t, layer], level, decimals=DECIMALS)}
                for layer in range(values.shape[1])
            ]
            for t, target in enumerate(TARGETS)
        }
    return layers


def _chosen(choice: dict | None, shares: dict, replicates: dict | None, level: float) -> dict | None:
    """A chosen head's shares for every group with intervals, and the paired differences that test it: the words
    whose attention its direction reads (dependents for dep_to_head, head words for head_to_dep) against the
    others, and dependents against non-dependents whatever the direction."""
    if choice is None or any(shares[group] is None for group in GROUPS):
        return None
    layer, head = choice["layer"], choice["head"]
    boot = None if replicates is None else {group: replicates[group][:, :, layer, head] for group in GROUPS}
    attending, others = ATTENDING[choice["direction"]]
    entry = {**choice, "name": head_name(layer, head, choice["direction"]), "attending": attending}
    for group in GROUPS:
        entry[group] = {target: {"share": round(float(shares[group][t, layer, head]), DECIMALS),
                                 "interval": None if boot is None else finite_interval(boot[group][:, t], level, decimals=DECIMALS)}
                        for t, target in enumerate(TARGETS)}

    def difference(high: str, low: str) -> dict:
        return {target: {"value": round(float(shares[high][t, layer, head] - shares[low][t, layer, head]), DECIMALS),
                         "interval": None if boot is None else finite_interval(boot[high][:, t] - boot[low][:, t], level,
                                                                                    decimals=DECIMALS)}
                for t, target in enumerate(TARGETS)}

    entry["difference"] = difference(others, attending)
    entry["difference_dependents"] = difference("non_dependents", "dependents")
    return entry


def _rounded(values: np.ndarray | None):
    return None if values is None else np.round(values, DECIMALS).tolist()
