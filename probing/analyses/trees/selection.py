"""What ``probing trees`` chooses on the selection treebank, and how a result carries it.

Choosing takes two passes over the selection treebank (DEV) and then work
without the model:

1. one pass with three accumulators on the same forward pass: the trees
   counts of every single head (:class:`~probing.analyses.trees.accumulator.TreesAccumulator`;
   the best head per decoding and metric), the probe's relation counts
   (:class:`~probing.analyses.probe.accumulator.ProbeAccumulator`; each relation's 25
   best heads per direction become the ensemble candidates), and the probes'
   training examples (:class:`ExamplesAccumulator`);
2. one pass keeping the candidates' attention for each relation's pairs
   (:class:`CollectorAccumulator`, :class:`probing.analyses.trees.ensembles.EnsembleCollector`);
3. the greedy ensemble search, then the probes' seeded training
   (:func:`choose`).

The result, a *selection*, is a plain dict stored in the result file: the
best single heads with their DEV counts, the ensembles, each probe's trained
parameters (``probing.results.schema.arrays.encode_array``, the float32 weights as they
are) and training record, the word-vector source, the options, the DEV
treebank and model it was made on, and a ``digest`` of the choices. A TEST
pass needs nothing else, so ``--select-on DEV.json`` lets shards of TEST skip
DEV; parts made with different choices (another digest) never merge. A result
written with ``--drop-probe-weights`` keeps each probe's weights as their
sha256 only (:func:`without_probe_weights`): small enough for a leaderboard
(a model's probes grow with its width and heads), but no longer a selection to reuse.

Every accumulator here follows the engine's protocol (state / load_state /
fresh / merge), so DEV passes run under torchrun and resume from checkpoints
like any other. Probe training examples are sorted by sentence index before
training, so the probes do not depend on which process read which batch.

>>> TreeOptions().as_dict()["relations"]
['dobj', 'det', 'pobj', 'poss']
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch

from probing.analyses.trees.defaults import (
    BATCH_SENTENCES,
    CANDIDATES,
    DEFAULT_TREE_RELATIONS,
    ENSEMBLE_SIZE,
    LEARNING_RATE,
    PROBE_EPOCHS,
)
from probing.analyses.trees.ensembles import EnsembleCollector, _Chunk, candidate_heads
from probing.analyses.trees.features import ProbeExample, ProbeExamples, read_word_vectors, word_vectors
from probing.analyses.trees.probes import PROBES
from probing.engine.accumulator import Accumulator, BatchView
from probing.errors import ProbingError


@dataclass(frozen=True)
class TreeOptions:
    """The options that decide a selection (``seed`` seeds the probes' initial weights and order)."""

    relations: tuple[str, ...] = DEFAULT_TREE_RELATIONS
    ensemble_size: int = ENSEMBLE_SIZE
    candidates: int = CANDIDATES
    probes: tuple[str, ...] = PROBES
    probe_epochs: int = PROBE_EPOCHS
    learning_rate: float = LEARNING_RATE
    batch_sentences: int = BATCH_SENTENCES
    seed: int = 0
    word_vectors: dict = field(default_factory=lambda: {"source": "input_embeddings"})

    def as_dict(self) -> dict:
        """JSON-ready (lists, not tuples), as stored in ``selection.options``."""
        return json.loads(json.dumps(asdict(self)))

    def compared(self) -> dict:
        """What a DEV selection and this run must share: everything but the seed (a TEST run's
        ``--seed`` seeds its bootstrap; the probes record their own seed)."""
        options = self.as_dict()
        options.pop("seed")
        return options


# ---------------------------------------------------------------------------- word vectors


class EmbeddingVectors:
    """The model's own input embeddings, averaged over each word's pieces (the default)."""

    def describe(self) -> dict:
        return {"source": "input_embeddings"}

    def dim(self, loaded) -> int:
        return int(loaded.model.get_input_embeddings().weight.shape[1])

    def __call__(self, view: BatchView) -> tuple[torch.Tensor, int, int]:
        """float32 [batch, word, dim], and words looked up / not found (always 0 here)."""
        batch = view.batch
        words = view.word_attention.shape[-1]
        weight = view.loaded.model.get_input_embeddings().weight
        return word_vectors(weight, batch.input_ids, batch.word_of_token, words), 0, 0


class FileVectors:
    """A GloVe-format text file (``--word-vectors``), read whole when the run is planned: a bad line (a word
    without numbers, a NaN) is refused before any model time, not after the pass that first looks a word up."""

    def __init__(self, path: str | Path):
        from probing.data.datasets.cache import sha256_of

        self.path = Path(path)
        if not self.path.is_file():
            raise ProbingError("word vector file not found", source=f"--word-vectors {path}")
        self.sha256 = sha256_of(self.path)
        self.table = read_word_vectors(self.path)

    def describe(self) -> dict:
        return {"source": "file", "file": self.path.name, "sha256": self.sha256}

    def dim(self, loaded=None) -> int:
        return self.table.dim

    def __call__(self, view: BatchView) -> tuple[torch.Tensor, int, int]:
        table = self.table
        looked_up, unknown = table.looked_up, table.unknown
        vectors = table.batch(view.batch.sentences)
        return vectors, table.looked_up - looked_up, table.unknown - unknown


def vector_source(path: str | None):
    return FileVectors(path) if path else EmbeddingVectors()


# ---------------------------------------------------------------------------- DEV accumulators


class ExamplesAccumulator(Accumulator):
    """The selection treebank's probe training examples (float16 attention, word vectors, gold heads)."""

    analysis = "trees.examples"

    def __init__(self, vectors):
        super().__init__()
        self.vectors = vectors
        self.examples = ProbeExamples()
        self.vector_counts = torch.zeros(2, dtype=torch.long)  # looked up, not found

    def update(self, view: BatchView) -> None:
        batch = view.batch
        vectors, looked_up, unknown = self.vectors(view)
        self.vector_counts += torch.tensor([looked_up, unknown])
        self.examples.update(view.word_attention, view.attention, batch.word_of_token, batch.attention_mask,
                             vectors, batch.sentences, batch.num_words)

    def identity(self) -> dict:
        return {"analysis": self.analysis, "vectors": self.vectors.describe()}

    def state(self) -> dict:
        return {
            "examples": [{"attention": e.attention, "special": e.special, "vectors": e.vectors, "heads": e.heads,
                          "scored": e.scored, "index": e.index} for e in self.examples.examples],
            "vector_counts": self.vector_counts.clone(),
        }

    def load_state(self, state: dict) -> ExamplesAccumulator:
        self.examples = ProbeExamples([ProbeExample(**entry) for entry in state["examples"]])
        self.vector_counts = state["vector_counts"].clone()
        return self

    def fresh(self) -> ExamplesAccumulator:
        return ExamplesAccumulator(self.vectors)

    def merge(self, other: ExamplesAccumulator) -> ExamplesAccumulator:
        self.examples.examples.extend(other.examples.examples)
        self.vector_counts += other.vector_counts
        return self

    def ordered(self) -> list[ProbeExample]:
        """The examples by sentence index: the same list however the pass was split."""
        return sorted(self.examples.examples, key=lambda example: example.index)


def _key_name(key: tuple[str, str]) -> str:
    return f"{key[0]}|{key[1]}"


class CollectorAccumulator(Accumulator):
    """The candidates' attention on each relation's pairs, for the greedy ensemble search."""

    analysis = "trees.collector"

    def __init__(self, candidates: dict, causal: bool = False):
        super().__init__()
        self.collector = EnsembleCollector(candidates, causal=causal)

    def update(self, view: BatchView) -> None:
        batch = view.batch
        self.collector.update(view.word_attention, batch.sentences, batch.num_words)

    def identity(self) -> dict:
        return {"analysis": self.analysis, "causal": self.collector.causal,
                "candidates": {_key_name(key): [list(head) for head in heads]
                               for key, heads in self.collector.candidates.items()}}

    def state(self) -> dict:
        collector = self.collector
        return {
            "totals": torch.tensor([collector.totals[key] for key in collector.candidates], dtype=torch.long),
            "chunks": {_key_name(key): [{"scores": c.scores, "target": c.target, "reachable": c.reachable}
                                        for c in collector.chunks[key]] for key in collector.candidates},
        }

    def load_state(self, state: dict) -> CollectorAccumulator:
        collector = self.collector
        keys = list(collector.candidates)
        if len(state["totals"]) != len(keys) or set(state["chunks"]) != {_key_name(key) for key in keys}:
            raise ProbingError("the saved ensemble candidates differ from this run's")
        collector.totals = {key: int(total) for key, total in zip(keys, state["totals"])}
        collector.chunks = {key: [_Chunk(**chunk) for chunk in state["chunks"][_key_name(key)]] for key in keys}
        return self

    def fresh(self) -> CollectorAccumulator:
        return CollectorAccumulator(self.collector.candidates, self.collector.causal)

    def merge(self, other: CollectorAccumulator) -> CollectorAccumulator:
        for key in self.collector.candidates:
            self.collector.totals[key] += other.collector.totals[key]
            self.collector.chunks[key].extend(other.collector.chunks[key])
        return self


def ensemble_candidates(relations_accumulator, limit: int) -> dict:
    """Per (relation, direction) the ``limit`` best heads, from a ProbeAccumulator's counts (a decoder's
    causal direction too)."""
    counts = relations_accumulator.counts
    causal = {name: counts.causal_heads[r].numpy() for r, name in enumerate(counts.relations)} if counts.causal else None
    return candidate_heads({name: counts.heads[r].numpy() for r, name in enumerate(counts.relations)}, limit, causal)


# ---------------------------------------------------------------------------- choosing


def encode_parameters(module: torch.nn.Module) -> dict:
    """A module's parameters as encoded float32 arrays, exactly as trained."""
    from probing.results.schema.arrays import encode_array

    return {name: encode_array(tensor.detach().cpu().float().numpy()) for name, tensor in module.state_dict().items()}


def parameters_sha256(parameters: dict) -> str:
    """sha256 of a probe's encoded parameters (their canonical JSON): what a result without the weights keeps.

    >>> parameters_sha256({}) == parameters_sha256({})
    True
    """
    text = json.dumps(parameters, sort_keys=True, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def without_probe_weights(selection: dict) -> dict:
    """The selection with each probe's ``parameters`` replaced by ``parameters_sha256`` (and their shapes).

    The ``digest`` is kept as made (it covers the weights), so parts still merge with parts that keep them.

    >>> kept = {"probes": {"attn": {"dim": 2, "parameters": {"root": {"shape": [3], "dtype": "float32", "data": ""}}}}}
    >>> without_probe_weights(kept)["probes"]["attn"]["parameter_shapes"]
    {'root': [3]}
    """
    probes = {}
    for name, entry in (selection.get("probes") or {}).items():
        entry = dict(entry)
        parameters = entry.pop("parameters", None)
        if parameters is not None:
            entry["parameters_sha256"] = parameters_sha256(parameters)
            entry["parameter_shapes"] = {key: value["shape"] for key, value in parameters.items()}
        probes[name] = entry
    return {**selection, "probes": probes}


def probe_modules(selection: dict, num_layers: int, num_heads: int) -> dict:
    """The trained probes of a selection, rebuilt as eval-mode modules."""
    from probing.analyses.trees.probes import make_probe
    from probing.results.schema.arrays import decode_array

    modules = {}
    for name, entry in (selection.get("probes") or {}).items():
        if "parameters" not in entry:
            raise ProbingError(f"the selection keeps probe {name!r} as a sha256 only (written with "
                               "--drop-probe-weights); choose on the DEV treebank itself", source="--select-on")
        module = make_probe(name, num_layers, num_heads, entry["dim"], seed=0)
        state = {key: torch.from_numpy(decode_array(value).copy()).float() for key, value in entry["parameters"].items()}
        try:
            module.load_state_dict(state)
        except RuntimeError as error:
            raise ProbingError(f"the selection's probe {name!r} does not fit a model of {num_layers} x {num_heads} "
                               f"heads ({str(error).splitlines()[0]})", source="--select-on") from None
        modules[name] = module.eval()
    return modules


def digest(selection: dict) -> str:
    """sha256 of what a selection chose (heads, ensembles, probes' weights, word vectors, options, model)."""
    chosen = {key: selection.get(key) for key in ("best_heads", "ensembles", "options", "reading")}
    if "causal_best_heads" in selection:  # a decoder's (an encoder's digest is as it always was)
        chosen["causal_best_heads"] = selection["causal_best_heads"]
    chosen["model"] = (selection.get("model") or {}).get("fingerprint")
    chosen["word_vectors"] = {key: value for key, value in (selection.get("word_vectors") or {}).items()
                              if key in ("source", "sha256", "dim")}
    chosen["probes"] = {name: {"dim": entry["dim"], "parameters": entry["parameters"]}
                        for name, entry in (selection.get("probes") or {}).items()}  # (before any weights are dropped)
    text = json.dumps(chosen, sort_keys=True, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def choose(trees, collector: CollectorAccumulator, examples: ExamplesAccumulator | None, options: TreeOptions, *,
           loaded, num_heads: int, reading: dict, made_on: dict, vectors, log=None) -> dict:
    """The selection: best single heads (from ``trees``), ensembles (greedy search on ``collector``),
    trained probes (on ``examples``, None for none). ``log(text)`` hears what each stage took."""
    from probing.analyses.trees.probes import make_probe, train_probe
    from probing.results.identity import model_identity
    from probing.results.io import model_block, now_iso

    log = log or (lambda text: None)
    seconds = {}
    started = time.perf_counter()
    ensembles = collector.collector.search(options.ensemble_size)
    seconds["ensemble_search"] = round(time.perf_counter() - started, 3)
    log(f"ensemble search: {seconds['ensemble_search']:.1f} s")
    probes = {}
    if examples is not None and options.probes:
        ordered = examples.ordered()
        if not ordered:
            raise ProbingError("the selection treebank gave no sentence to train the probes on")
        dim = int(ordered[0].vectors.shape[-1])
        for name in options.probes:
            started = time.perf_counter()
            module = make_probe(name, loaded.num_layers, num_heads, dim, seed=options.seed)
            record = train_probe(module, ordered, seed=options.seed, epochs=options.probe_epochs,
                                 learning_rate=options.learning_rate, batch_sentences=options.batch_sentences)
            seconds[f"training {name}"] = round(time.perf_counter() - started, 3)
            log(f"training {name}: {seconds[f'training {name}']:.1f} s (final loss "
                f"{record['mean_loss_per_epoch'][-1]:.3f})")
            probes[name] = {"dim": dim, "parameters": encode_parameters(module), "training": record}
    word_vectors_block = dict(vectors.describe())
    if examples is not None and options.probes:
        word_vectors_block["dim"] = dim
        if word_vectors_block["source"] == "file":
            word_vectors_block["looked_up"] = int(examples.vector_counts[0])
            word_vectors_block["unknown"] = int(examples.vector_counts[1])
    block = model_block(loaded)
    selection = {
        "made_on": made_on,
        "model": {"name_or_path": block["name_or_path"], "name": block.get("name"), **model_identity(block)},
        "reading": reading,
        "options": options.as_dict(),
        "best_heads": trees.best_heads(),
        **({"causal_best_heads": trees.causal_best_heads()} if trees.causal else {}),
        "words": trees.single.total,
        "baselines": trees.summary()["baselines"],
        "ensembles": [ensemble.as_dict() for ensemble in ensembles],
        "probes": probes,
        "word_vectors": word_vectors_block,
        "seconds": seconds,
        "created": now_iso(),
        "source": None,
    }
    selection["digest"] = digest(selection)
    return selection


# ---------------------------------------------------------------------------- reusing a DEV result


def read_selection(path: str) -> tuple[dict, dict]:
    """A trees result that holds a selection (``--select-on DEV.json``): (result, its selection)."""
    from probing.results.io import read_result

    try:
        result = read_result(path, analysis="trees")
    except ProbingError as error:
        raise ProbingError(f"{error} (given as --select-on)") from None
    if (result["config"].get("shard") or None) is not None:
        raise ProbingError("is one shard of a run, which chose nothing; select on a whole run (or on the DEV "
                           "treebank itself)", source=f"--select-on {path}")
    selection = result.get("selection")
    if not selection:
        raise ProbingError("holds no selection (made from shards, which choose nothing); run probing trees on the "
                           "whole DEV treebank first", source=f"--select-on {path}")
    dropped = sorted(name for name, entry in (selection.get("probes") or {}).items() if "parameters" not in entry)
    if dropped:
        raise ProbingError(f"keeps the weights of probe {', '.join(dropped)} as a sha256 only (written with "
                           "--drop-probe-weights), so it cannot report them again; give the DEV treebank itself, or "
                           "a trees result written without that option", source=f"--select-on {path}")
    return result, selection


def check_selection(selection: dict, options: TreeOptions, reading: dict, *, source: str, loaded=None) -> None:
    """Fail with one line unless a DEV selection fits this run's options (and model, once loaded); that it holds
    none of the sentences reported on is the held-out flow's check (probing.stats.heldout.HeldOut)."""
    from probing.results.identity import difference, model_identity
    from probing.results.io import model_block

    mine = {key: value for key, value in selection["options"].items() if key != "seed"}
    found = difference(mine, options.compared(), "options", labels=("DEV", "this run"))
    if found:
        raise ProbingError(f"DEV chose with other options: {found}; give the options it was made with", source=source)
    found = difference(selection["reading"], reading, "reading", labels=("DEV", "this run"))
    if found:
        raise ProbingError(f"DEV read attention differently: {found}", source=source)
    if loaded is not None and loaded.is_causal and "causal_best_heads" not in selection:
        raise ProbingError("holds no choice in the causal reading (made before a decoder's trees were read "
                           "later-to-earlier); choose again on the DEV treebank itself", source=source)
    if loaded is not None:
        theirs = {key: selection["model"].get(key) for key in model_identity(model_block(loaded))}
        found = difference(theirs, model_identity(model_block(loaded)), "model", labels=("DEV", "this run"))
        if found:
            raise ProbingError(f"DEV and TEST are not of the same model: {found}", source=source)
