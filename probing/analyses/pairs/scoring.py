"""Sentence log-probabilities of a causal LM, and BLiMP accuracies from them (docs/minimal-pairs.md).

log p(sentence) = the sum over its tokens of log p(token | everything before it), the sentence tokenized
as plain text without special tokens and preceded by one token of context: the tokenizer's BOS token, or
its EOS token when it has none (as lm-evaluation-harness does for an empty context). One forward pass
per batch of sentences, one sentence per row, padded on the right: a causal model's token never sees the
padding after it, and positions count from the first real token, so padding changes no score beyond
float rounding. Log-probabilities are taken in float32 from the logits.

A pair is right when log p(good) > log p(bad) (a tie is wrong). Accuracy per paradigm and per field,
and overall as the mean of the paradigm accuracies (BLiMP's convention), each with a 95% percentile
bootstrap interval over pairs (seeded, so reproducible).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from probing.errors import ProbingError
from probing.stats.intervals import LEVEL, percentile_interval


def context_token(tokenizer) -> int:
    """The one token before every sentence: BOS, else EOS."""
    token = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
    if token is None:
        raise ProbingError("the tokenizer has neither a BOS nor an EOS token to start a sentence with", source="--model")
    return int(token)


def plain_tokenizer(loaded):
    """The checkpoint's own tokenizer, as it reads plain text: the loaded one may have been given a space before
    every pre-split word (probing.model.tokenizers), which would change a sentence's first token."""
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(loaded.name_or_path, revision=loaded.revision)


def encode(tokenizer, sentences: Sequence[str]) -> list[list[int]]:
    """Each sentence's ids: the context token, then the plain text's tokens."""
    start = context_token(tokenizer)
    return [[start, *tokenizer(text, add_special_tokens=False)["input_ids"]] for text in sentences]


def padded(encoded: Sequence[Sequence[int]]) -> tuple[torch.Tensor, torch.Tensor]:
    """ids and attention mask [sentence, token] of encoded sentences, right-padded with 0.

    >>> ids, mask = padded([[1, 5], [1]])
    >>> ids.tolist(), mask.tolist()
    ([[1, 5], [1, 0]], [[1, 1], [1, 0]])
    """
    longest = max(map(len, encoded))
    ids = torch.zeros((len(encoded), longest), dtype=torch.long)  # [sentence, token]
    mask = torch.zeros((len(encoded), longest), dtype=torch.long)
    for row, tokens in enumerate(encoded):
        ids[row, : len(tokens)] = torch.tensor(tokens)
        mask[row, : len(tokens)] = 1
    return ids, mask


def row_log_probs(logits: torch.Tensor, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """log p(row) [row]: the float32 sum of log p(token t + 1 | tokens <= t) over each row's real tokens.

    ``logits`` [row, token, vocab]; ``ids`` and ``mask`` [row, token], on the logits' device.
    """
    log_probs = torch.log_softmax(logits[:, :-1].float(), dim=-1)  # prediction of token t+1 from tokens <= t
    picked = log_probs.gather(-1, ids[:, 1:, None])[..., 0] * mask[:, 1:]  # [row, token - 1]
    return picked.sum(dim=1)


@torch.inference_mode()
def sentence_log_probs(model, tokenizer, sentences: Sequence[str], *, batch_size: int = 32,
                       device: str = "cpu") -> list[float]:
    """log p(sentence) of every sentence, in order; ``batch_size`` sentences per forward pass."""
    encoded = encode(tokenizer, sentences)
    scores: list[float] = []
    for start in range(0, len(encoded), batch_size):
        ids, mask = padded(encoded[start : start + batch_size])
        ids, mask = ids.to(device), mask.to(device)
        logits = model(input_ids=ids, attention_mask=mask).logits  # [sentence, token, vocab]
        scores += row_log_probs(logits, ids, mask).cpu().tolist()
    return scores


def paradigm_draws(size: int, bootstrap: int, seed: int, index: int) -> np.ndarray:
    """The bootstrap's resamples of paradigm number ``index`` (of ``size`` pairs): [replicate, size] pair rows.

    Seeded by (seed, paradigm index), so every run that resamples the same paradigms draws the same pairs.

    >>> paradigm_draws(3, 2, seed=0, index=0).shape
    (2, 3)
    """
    return np.random.default_rng([seed, index]).integers(0, size, size=(bootstrap, size))


def accuracies(pairs, good: Sequence[float], bad: Sequence[float], *, bootstrap: int = 1000, seed: int = 0,
               level: float = LEVEL) -> dict:
    """Per paradigm, per field and overall accuracy with bootstrap intervals over pairs.

    Each replicate resamples the pairs of every paradigm with replacement (seeded by (seed, paradigm
    index)); the overall figure of a replicate is the mean of its paradigm accuracies, and a field's the
    accuracy over its replicate's pairs.

    >>> from probing.data.minimal_pairs import MinimalPair
    >>> pairs = [MinimalPair("a", "syntax", "g", "b")] * 2 + [MinimalPair("b", "morphology", "g", "b")] * 2
    >>> result = accuracies(pairs, [0.0, -1.0, -2.0, -1.0], [-1.0, -1.0, -1.0, -2.0], bootstrap=0)
    >>> result["overall"]["accuracy"], result["paradigms"]["a"]["accuracy"], result["paradigms"]["a"]["right"]
    (0.5, 0.5, [True, False])
    """
    right = np.asarray(good, dtype=np.float64) > np.asarray(bad, dtype=np.float64)
    uids = list(dict.fromkeys(pair.uid for pair in pairs))
    fields = list(dict.fromkeys(pair.field for pair in pairs))
    rows = {uid: np.array([i for i, pair in enumerate(pairs) if pair.uid == uid]) for uid in uids}
    field_of = {uid: next(pair.field for pair in pairs if pair.uid == uid) for uid in uids}
    replicated = {}  # uid -> [replicate] (right count, pairs) of that paradigm's resample
    for index, uid in enumerate(uids):
        n = len(rows[uid])
        draws = paradigm_draws(n, bootstrap, seed, index) if bootstrap else None
        replicated[uid] = None if draws is None else right[rows[uid]][draws].sum(axis=1)

    def interval(values):
        return None if not bootstrap else list(percentile_interval(values, level))

    paradigms = {}
    for uid in uids:
        n = len(rows[uid])
        paradigms[uid] = {"field": field_of[uid], "pairs": n, "accuracy": float(right[rows[uid]].mean()),
                          "interval": interval(None if not bootstrap else replicated[uid] / n),
                          "right": right[rows[uid]].tolist(), "log_p_good": [float(good[i]) for i in rows[uid]],
                          "log_p_bad": [float(bad[i]) for i in rows[uid]]}
    by_field = {}
    for name in fields:
        members = [uid for uid in uids if field_of[uid] == name]
        total = sum(len(rows[uid]) for uid in members)
        correct = sum(int(right[rows[uid]].sum()) for uid in members)
        boot = None if not bootstrap else sum(replicated[uid] for uid in members) / total
        by_field[name] = {"paradigms": len(members), "pairs": total, "accuracy": correct / total,
                          "interval": interval(boot)}
    overall_boot = None if not bootstrap else np.mean([replicated[uid] / len(rows[uid]) for uid in uids], axis=0)
    overall = {"paradigms": len(uids), "pairs": len(pairs),
               "accuracy": float(np.mean([paradigms[uid]["accuracy"] for uid in uids])) if uids else None,
               "interval": interval(overall_boot) if uids else None}
    return {"overall": overall, "fields": by_field, "paradigms": paradigms,
            "bootstrap": {"replicates": bootstrap, "seed": seed, "level": level}}
