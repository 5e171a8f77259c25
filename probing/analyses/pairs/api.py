"""``score_pairs``: load a causal LM, read a pair set (BLiMP by default), score every pair, return a versioned result
dict.

>>> from probing.testing import tiny_bert
>>> score_pairs(tiny_bert(), paradigms=["anaphor_gender_agreement"], limit=1)
Traceback (most recent call last):
...
probing.errors.ProbingError: --model: is a masked LM, which has no minimal-pair score (BLiMP needs a causal LM head)
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from probing.errors import ProbingError

if TYPE_CHECKING:  # the specs pairs' library function takes
    from probing.analyses.pairs.options import PairsOptions
    from probing.engine.options import PassOptions
    from probing.engine.specs import InputSpec, ModelSpec


def check_causal_lm(name_or_path: str, revision: str | None = None) -> None:
    """Refuse, in one line, a model without a causal LM head, before its weights are loaded."""
    from transformers import AutoConfig

    from probing.model.heads import language_model_head
    from probing.model.hub import check_location

    check_location(name_or_path, revision)  # one line for a folder or hub id that is not there
    try:
        config = AutoConfig.from_pretrained(name_or_path, revision=revision)
    except (OSError, ValueError) as error:
        raise ProbingError(f"cannot read the model's config ({error})", source="--model") from None
    if language_model_head(config) != "causal_lm":
        raise ProbingError("is a masked LM, which has no minimal-pair score (BLiMP needs a causal LM head)",
                           source="--model")


def score_pairs(model: str, *, paradigms=None, limit: int | None = None, blimp: str | None = None,
                batch_size: int = 32, bootstrap: int = 1000, seed: int = 0, device: str = "cpu",
                revision: str | None = None, loaded=None, dtype: str = "float32", device_map: str | None = None,
                context: str = "bos", shard: tuple[int, int] | None = None, progress: bool = False,
                pairs_file: str | None = None, phenomena=None, pair_set: str | None = None,
                minimal_pairs: str | None = None, lexicon=()) -> dict:
    """Score the first ``limit`` pairs of each paradigm after ``context`` (probing.analyses.pairs.scoring.CONTEXTS);
    with ``shard`` (index, count) only the pairs whose place in their paradigm is index modulo count, so that the
    parts of a long run can be scored apart and added up by ``probing merge`` into the whole run's result.
    ``progress`` shows the load and the scoring as every long command does (probing.engine.progress): a bar on a
    terminal, lines off one (nohup, Slurm, CI). ``pair_set``: the set by name (probing.data.pair_sets.catalogue:
    blimp by default, clams-de, rublimp, de_pud:agreement ...), read from ``blimp`` (BLiMP's own folder) or
    ``minimal_pairs`` (a folder of pair sets), else the environment's or the cache; ``lexicon``: treebanks whose forms
    pairs made from a treebank may take too. ``pairs_file``: a user's own pair file in BLiMP's format instead
    (probing.data.minimal_pairs.read_pair_file: unpinned, its own sha256 recorded). ``paradigms`` and ``phenomena``
    choose among the set's or the file's own."""
    from probing.analyses.pairs.accuracy import accuracies
    from probing.analyses.pairs.options import chosen_pair_set
    from probing.analyses.pairs.scoring import context_token, pair_log_probs
    from probing.data.minimal_pairs import read_pair_file
    from probing.engine.progress import progress_bar
    from probing.engine.startup import load_while_validating, model_name
    from probing.model.loading import load_model
    from probing.model.tokenizers import plain_tokenizer
    from probing.results.io import environment_block, model_block, now_iso, tool_block
    from probing.results.schema import SCHEMA_VERSION

    started = time.perf_counter()
    named = None if pairs_file is not None else chosen_pair_set(pair_set, paradigms, blimp=blimp, lexicon=lexicon)
    if loaded is None:
        check_causal_lm(model, revision)  # a masked LM or a missing folder is refused before anything is read
    if named is not None:  # every file checked before the weights load
        from probing.data.pair_sets.catalogue import Sources

        pairs, described = read_scored_pairs(named, Sources(minimal_pairs, blimp, tuple(lexicon)), paradigms,
                                             phenomena, limit)
    else:  # the whole file checked before the weights load
        pairs, described = read_pair_file(pairs_file, paradigms, phenomena, limit)
    chosen = tuple(dict.fromkeys(pair.uid for pair in pairs))
    read = len(pairs)
    if shard is not None:
        pairs = shard_of(pairs, shard)
    if loaded is None:  # log-probabilities are taken in float32 whatever the weights
        loaded = load_while_validating(lambda: load_model(model, revision=revision, device=device, head="causal_lm",
                                                          dtype=dtype, device_map=device_map),
                                       (), name=model_name(model), announce=progress)
    tokenizer = plain_tokenizer(loaded)
    model_started = time.perf_counter()
    sentences = [text for pair in pairs for text in (pair.good, pair.bad)]
    with progress_bar(total=len(sentences), description=f"scoring {len(pairs):,} pairs", enabled=progress) as shown:
        scores = pair_log_probs(loaded.model, tokenizer, sentences, batch_size=batch_size, device=loaded.device,
                                context=context, after_batch=shown.update)
    seconds_model = time.perf_counter() - model_started
    payload = accuracies(pairs, scores[0::2], scores[1::2], bootstrap=bootstrap, seed=seed)
    token = context_token(tokenizer, context)
    payload["context_token"] = None if token is None else tokenizer.convert_ids_to_tokens(token)
    total = time.perf_counter() - started
    return {
        "schema_version": SCHEMA_VERSION,
        "analysis": "pairs",
        "tool": tool_block(),
        # the token this run put before every sentence (its context), not the sink token attention passes prepend
        "model": {**model_block(loaded), "prepended_token": payload["context_token"]},
        "input": {**described, "units_total": read, "units_used": len(pairs), "skipped": {}},
        "config": {"paradigms": list(chosen), "limit": limit, "batch_size": batch_size, "bootstrap": bootstrap,
                   "seed": seed, "context": context,
                   "shard": None if shard is None else {"index": shard[0], "count": shard[1]}},
        "environment": environment_block(),
        "timing": {"seconds_total": round(total, 3), "seconds_model": round(seconds_model, 3)},
        "created": now_iso(),
        "pairs": payload,
    }


def read_scored_pairs(chosen, sources, paradigms=None, phenomena=None, limit: int | None = None):
    """The pairs of a pair set and their ``input`` block, refused in one line when it holds none to score (a
    treebank whose subject arcs gave no pair says what became of them)."""
    pairs, described = chosen.read(sources, paradigms, phenomena, limit)
    if not pairs:
        from probing.data.pair_sets.from_treebank import made_from_line

        made = described.get("made_from")
        raise ProbingError("has no pair to score" + (f" ({made_from_line(made)})" if made else ""),
                           source=f"--pair-set {chosen.name}")
    return pairs, described


def shard_of(pairs: list, shard: tuple[int, int]) -> list:
    """The pairs of part ``shard`` = (index, count): in each paradigm, those whose place (from 0, in file order)
    is index modulo count; every part holds every paradigm, so a part is a sample of the whole benchmark.

    >>> from probing.data.minimal_pairs import MinimalPair
    >>> pairs = [MinimalPair(uid, "syntax", f"{uid}{i}", "x") for uid in "ab" for i in range(3)]
    >>> [pair.good for pair in shard_of(pairs, (1, 2))]
    ['a1', 'b1']
    """
    index, count = shard
    place: dict[str, int] = {}
    kept = []
    for pair in pairs:
        position = place.get(pair.uid, 0)
        place[pair.uid] = position + 1
        if position % count == index:
            kept.append(pair)
    return kept


def pairs(model: ModelSpec, inputs: InputSpec, passes: PassOptions, options: PairsOptions) -> dict:
    """The minimal-pairs result of ``model`` (a causal LM) on the first ``inputs.limit`` pairs of each paradigm of
    ``options``' pair set (or pair file), ``passes.batch_size`` sentences a forward pass, part ``passes.shard``:
    what ``probing pairs`` and ``probing.run("pairs", ...)`` both run."""
    return score_pairs(model.model, paradigms=options.paradigms, limit=inputs.limit, blimp=options.blimp,
                       batch_size=passes.batch_size, bootstrap=options.bootstrap, seed=model.seed,
                       device=model.device, revision=model.revision, dtype=model.dtype,
                       device_map=model.device_map, context=options.context, shard=passes.shard,
                       progress=passes.progress, pairs_file=options.pairs_file, phenomena=options.phenomena,
                       pair_set=options.pair_set, minimal_pairs=options.minimal_pairs, lexicon=options.lexicon)
