"""``pairs``, the library function of ``probing pairs``: read a pair set (BLiMP by default) or one's own file, start
the run that loads a causal LM, score every pair on the one pass over pairs, return a versioned result dict;
``score_pairs`` is the same by keywords.

>>> from probing.testing import tiny_bert
>>> score_pairs(tiny_bert(), paradigms=["anaphor_gender_agreement"], limit=1)
Traceback (most recent call last):
...
probing.errors.ProbingError: --model: is a masked LM, which has no minimal-pair score (BLiMP needs a causal LM head)
"""

from __future__ import annotations

import dataclasses
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
                revision: str | None = None, dtype: str = "float32", device_map: str | None = None,
                context: str = "bos", shard: tuple[int, int] | None = None, progress: bool = False,
                pairs_file: str | None = None, phenomena=None, pair_set: str | None = None,
                minimal_pairs: str | None = None, lexicon=()) -> dict:
    """:func:`pairs` by keywords, as a notebook writes it: ``score_pairs("gpt2", paradigms=[...], limit=100)``
    (``pair_set``: probing.data.pair_sets.catalogue's names, BLiMP by default; ``pairs_file``: one's own pairs
    instead; ``shard``: (index, count))."""
    from probing.analyses.pairs.options import PairsOptions
    from probing.engine.options import PassOptions
    from probing.engine.specs import InputSpec, ModelSpec

    options = PairsOptions(pair_set=pair_set, minimal_pairs=minimal_pairs, lexicon=tuple(lexicon), paradigms=paradigms,
                           phenomena=phenomena, blimp=blimp, pairs_file=pairs_file, context=context, bootstrap=bootstrap)
    return pairs(ModelSpec(model=model, revision=revision, dtype=dtype, device=device, device_map=device_map, seed=seed),
                 InputSpec(limit=limit), PassOptions(batch_size=batch_size, shard=shard, progress=progress), options)


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


def pairs(model: ModelSpec, inputs: InputSpec, passes: PassOptions, options: PairsOptions, *,
          start=None) -> dict:
    """The minimal-pairs result of ``model`` (a causal LM) on the first ``inputs.limit`` pairs of each paradigm of
    ``options``' pair set (or pair file), after ``options.context`` (probing.model.token_scores.CONTEXTS),
    ``passes.batch_size`` sentences a forward pass; with ``passes.shard`` (index, count) only the pairs whose place in
    their paradigm is index modulo count, so that the parts of a long run can be scored apart and added up by
    ``probing merge`` into the whole run's result. What ``probing pairs`` and ``probing.run("pairs", ...)`` both run:
    ``start`` (probing.engine.run.start_run unless the command gives its own) starts the run that loads the model
    and runs the one pass over pairs (probing.engine.pair_passes), with its progress, timing and checkpoints."""
    from probing.analyses.pairs.accuracy import accuracies
    from probing.analyses.pairs.options import pair_set_inputs
    from probing.analyses.pairs.scoring import PairScores
    from probing.engine.run import start_run
    from probing.model.token_scores import context_token, encode
    from probing.model.tokenizers import plain_tokenizer
    from probing.results.io import environment_block, model_block, now_iso, timing_block, tool_block
    from probing.results.schema import SCHEMA_VERSION

    run = (start or start_run)(dataclasses.replace(model, head="causal_lm"), inputs.open(), passes,
                               reads=tuple(str(path) for path in pair_set_inputs(options)))
    pairs, described, read = _pairs_read(model, inputs, options)  # every file checked before the weights load
    chosen = list(dict.fromkeys(pair.uid for pair in pairs))  # every paradigm read, whatever the shard holds
    if passes.shard is not None:
        pairs = shard_of(pairs, passes.shard)
    tokenizer = plain_tokenizer(run.loaded)
    encoded = encode(tokenizer, [text for pair in pairs for text in (pair.good, pair.bad)], options.context)
    scores = PairScores(len(pairs))
    stats = run.run_pairs([scores], list(zip(encoded[0::2], encoded[1::2])), by_length=True,
                          pairs_per_batch=max(1, passes.batch_size // 2), description=f"scoring {len(pairs):,} pairs")
    payload = accuracies(pairs, *scores.scores(), bootstrap=options.bootstrap, seed=model.seed)
    token = context_token(tokenizer, options.context)
    payload["context_token"] = None if token is None else tokenizer.convert_ids_to_tokens(token)
    shard = passes.shard
    return {
        "schema_version": SCHEMA_VERSION,
        "analysis": "pairs",
        "tool": tool_block(),
        # the token this run put before every sentence (its context), not the sink token attention passes prepend
        "model": {**model_block(run.loaded), "prepended_token": payload["context_token"]},
        "input": {**described, "units_total": read, "units_used": len(pairs), "skipped": {}},
        "config": {"paradigms": chosen, "limit": inputs.limit,
                   "batch_size": passes.batch_size, "bootstrap": options.bootstrap, "seed": model.seed,
                   "context": options.context, "shard": None if shard is None else {"index": shard[0], "count": shard[1]}},
        "environment": environment_block(),
        "timing": timing_block(stats),
        "created": now_iso(),
        "pairs": payload,
    }


def _pairs_read(model: ModelSpec, inputs: InputSpec, options: PairsOptions):
    """The pairs of ``options`` (the first ``inputs.limit`` of each paradigm), their ``input`` block and how many;
    a model that is no causal LM, or a folder that is not there, refused first, in one line."""
    from probing.data.minimal_pairs import read_pair_file

    check_causal_lm(model.model, model.revision)
    if options.pairs_file:
        pairs, described = read_pair_file(options.pairs_file, options.paradigms, options.phenomena, inputs.limit)
    else:
        from probing.analyses.pairs.options import chosen_pair_set, sources_of

        chosen = chosen_pair_set(options.pair_set, options.paradigms, blimp=options.blimp, lexicon=options.lexicon)
        pairs, described = read_scored_pairs(chosen, sources_of(options), options.paradigms, options.phenomena,
                                             inputs.limit)
    return pairs, described, len(pairs)
