"""``score_pairs``: load a causal LM, read BLiMP, score every pair, return a versioned result dict.

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
                pairs_file: str | None = None, phenomena=None) -> dict:
    """Score the first ``limit`` pairs of each paradigm after ``context`` (probing.analyses.pairs.scoring.CONTEXTS);
    with ``shard`` (index, count) only the pairs whose place in their paradigm is index modulo count, so that the
    parts of a long run can be scored apart and added up by ``probing merge`` into the whole run's result.
    ``progress`` shows the load and the scoring as every long command does (probing.engine.progress): a bar on a
    terminal, lines off one (nohup, Slurm, CI). ``pairs_file``: a user's own pair file in BLiMP's format instead of
    BLiMP (probing.data.minimal_pairs.read_pair_file: unpinned, its own sha256 recorded), ``paradigms`` and
    ``phenomena`` then choosing among its own."""
    from probing.analyses.pairs.accuracy import accuracies
    from probing.analyses.pairs.scoring import context_token, pair_log_probs
    from probing.data.minimal_pairs import check_paradigms, read_pair_file, read_pairs
    from probing.engine.progress import progress_bar
    from probing.engine.startup import load_while_validating, model_name
    from probing.model.loading import load_model
    from probing.model.tokenizers import plain_tokenizer
    from probing.results.io import environment_block, model_block, now_iso, tool_block
    from probing.results.schema import SCHEMA_VERSION

    started = time.perf_counter()
    if pairs_file is None:
        chosen = check_paradigms(paradigms)
    if loaded is None:
        check_causal_lm(model, revision)  # a masked LM or a missing folder is refused before anything is read
    if pairs_file is None:
        pairs, described = read_pairs(chosen, blimp, limit)  # every file checked before the weights load
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
        "model": model_block(loaded),
        "input": {**described, "units_total": read, "units_used": len(pairs), "skipped": {}},
        "config": {"paradigms": list(chosen), "limit": limit, "batch_size": batch_size, "bootstrap": bootstrap,
                   "seed": seed, "context": context,
                   "shard": None if shard is None else {"index": shard[0], "count": shard[1]}},
        "environment": environment_block(),
        "timing": {"seconds_total": round(total, 3), "seconds_model": round(seconds_model, 3)},
        "created": now_iso(),
        "pairs": payload,
    }


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
    """The minimal-pairs result of ``model`` (a causal LM) on the first ``inputs.limit`` pairs of each paradigm,
    ``passes.batch_size`` sentences a forward pass, part ``passes.shard``, with ``options``: what ``probing pairs``
    and ``probing.run("pairs", ...)`` both run."""
    from probing.data.minimal_pairs import paradigms_of

    chosen_by_phenomenon = options.phenomena and not options.pairs_file
    if chosen_by_phenomenon:  # choosing by phenomenon reads every paradigm's file: a bad model first
        check_causal_lm(model.model, model.revision)
    paradigms = paradigms_of(options.phenomena, options.blimp) if chosen_by_phenomenon else options.paradigms
    return score_pairs(model.model, paradigms=paradigms, limit=inputs.limit, blimp=options.blimp,
                       batch_size=passes.batch_size, bootstrap=options.bootstrap, seed=model.seed,
                       device=model.device, revision=model.revision, dtype=model.dtype,
                       device_map=model.device_map, context=options.context, shard=passes.shard,
                       progress=passes.progress, pairs_file=options.pairs_file,
                       phenomena=options.phenomena if options.pairs_file else None)
