"""Across pair sets: are the heads that matter the same heads in every language? (no model pass, no torch)

Given importance maps of one model and one metric, each on another set of units (a language's pair set:
``clams-de``, ``de_pud:odd:agreement``, ...), every pair of maps (A, B) gets:

- **rho**: Spearman's rho over every head between A's harm and B's harm on one metric part (``overall`` for
  minimal pairs): does a head that costs A much cost B much too? Both harms are ranked with the importance map's
  tie (1e-9, probing.analyses.ablation.versus.TIE), so rho(A, B) = rho(B, A).
- **p**: A's harms permuted among the heads *of the same layer* (probing.stats.ranks.permuted_spearman, the
  permutations of the importance map's own test), p = (1 + permutations with rho at least the observed one) /
  (1 + permutations): one-sided, the same heads mattering in both. Depth is kept in every permutation, so two
  maps that both depend on the lower layers (as every map whose metric sits on the last layer can) do not make p
  small; only a match of heads *inside* layers does. Each unordered pair is tested once (the earlier map's harms
  permuted) and the p-values are adjusted together by Holm's rule (probing.stats.multiplicity.holm).
- **heads**: how many heads rho is taken over.

And per head, the maps in whose K most harmful heads it is (rank by harm, ties at the K-th included; a head whose
harm is not above 0 is never among them), and in how many languages: a head shared by most maps is a head the
metric needs whatever the language.

>>> harm = np.array([[[0.3, 0.1], [0.0, 0.2]], [[0.2, 0.1], [0.0, 0.3]]])   # two maps, 2 layers x 2 heads
>>> most_harmful(harm[0], 1), most_harmful(harm[1], 2)
([(0, 0)], [(1, 1), (0, 0)])
>>> round(float(rho_matrix(harm.reshape(2, -1))[0, 1]), 3)
0.8
"""

from __future__ import annotations

import numpy as np

from probing.analyses.ablation.versus import TIE, permutation_p
from probing.errors import ProbingError
from probing.stats.multiplicity import holm
from probing.stats.ranks import average_ranks, centred, permuted_spearman

DEFAULT_MOST_HARMFUL = 5
"""How many of each map's most harmful heads are counted across maps (about 7% of gemma-3-270m's 72 heads)."""

METHOD = (
    "rho: Spearman's rho over every head between two maps' harms on one metric part (average ranks, harms within "
    "1e-9 tied); p: the first map's harms permuted among the heads of each layer, (1 + permutations with rho at "
    "least the observed one) / (1 + permutations), one-sided, Holm-adjusted over every pair of maps; most harmful: "
    "each map's K heads of highest harm (ties at the K-th included, harm above 0); layers and heads from 0"
)

MODEL_KEYS = ("fingerprint", "random_init", "num_layers", "num_heads")
"""What two maps must share to be maps of one model's heads."""


def default_part(metric: str, parts: list[str]) -> str | None:
    """The metric part compared when none is named: BLiMP overall for minimal pairs, a loss's only part; None when
    the metric's primary part depends on a relation (the probe).

    >>> default_part("minimal-pairs", ["overall", "subject_verb_agreement"]), default_part("lm", ["loss"])
    ('overall', 'loss')
    """
    from probing.analyses.importance.board import primary_part

    found = primary_part(metric, parts, relation="")
    return found if found in parts else None


def set_label(result: dict) -> str:
    """How a map's units are named: its pair set (``clams-de``, ``de_pud:odd:agreement``), else its treebank.

    >>> set_label({"input": {"pair_set": "clams-de", "path": "clams-de@36b5c9a"}}), set_label({"input": {"path": "en_ewt:test"}})
    ('clams-de', 'en_ewt:test')
    """
    return result["input"].get("pair_set") or result["input"]["path"]


def language_of_set(result: dict) -> str:
    """The language of a map's units: a published pair set's own, else the code of the treebank its pairs were made
    from (or it was read from): ``de`` for ``de_pud:odd:agreement``, ``fi`` for ``fi_tdt:test:agreement``.

    >>> language_of_set({"input": {"pair_set": "rublimp"}}), language_of_set({"input": {"path": "fi_tdt:test"}})
    ('ru', 'fi')
    """
    from probing.stats.transfer import language_of

    named = result["input"].get("pair_set")
    if named and ":" not in named:
        from probing.data.pair_sets.catalogue import pair_set

        try:
            return pair_set(named).language
        except ProbingError:  # a set this version does not know: named by itself
            return named
    treebank = named.rsplit(":", 1)[0] if named else result["input"]["path"]
    return language_of({"treebank": {"path": treebank}}).split("_", 1)[0]


def rho_matrix(harms) -> np.ndarray:
    """float [map, map]: Spearman's rho of every two rows of ``harms`` [map, head] (each ranked with the tie), NaN
    where a map's harms are all equal."""
    centre, norm = centred(average_ranks(np.asarray(harms, dtype=np.float64), tie=TIE))
    with np.errstate(invalid="ignore", divide="ignore"):
        rho = (centre @ centre.T) / np.outer(norm, norm)
    return np.where(np.outer(norm, norm) > 0, rho, np.nan)


def most_harmful(harm, k: int) -> list[tuple[int, int]]:
    """(layer, head) of the ``k`` most harmful heads of ``harm`` [layer, head], most harmful first: every head whose
    rank (1 + the heads more harmful by more than the tie) is at most ``k`` and whose harm is above 0."""
    harm = np.asarray(harm, dtype=np.float64)
    flat = harm.ravel()
    rank = 1 + np.sum(flat[None, :] > flat[:, None] + TIE, axis=1)
    chosen = [index for index in np.argsort(-flat, kind="stable") if rank[index] <= k and flat[index] > TIE]
    return [tuple(int(x) for x in np.unravel_index(index, harm.shape)) for index in chosen]


def model_difference(model: dict, other: dict) -> str | None:
    """Why two maps' ``model`` blocks are not one model's heads, in words (the head shape first: it says most);
    None when they are.

    >>> model_difference({"num_layers": 18, "num_heads": 4}, {"num_layers": 6, "num_heads": 12})
    'head shape differs: 18 x 4 against 6 x 12'
    """
    shape, expected = ((block["num_layers"], block["num_heads"]) for block in (model, other))
    if shape != expected:
        return f"head shape differs: {shape[0]} x {shape[1]} against {expected[0]} x {expected[1]}"
    if model.get("fingerprint") != other.get("fingerprint"):
        return "its weights differ: another fingerprint"
    if model.get("random_init") != other.get("random_init"):
        return "one is the random init"
    return None


def check_maps(named: list[tuple[str, dict]], part: str | None) -> str:
    """Refuse, in one line naming the file, maps that cannot be compared: fewer than two, another model or head
    shape, another metric, the same units twice, or no harm on the part. Returns the part compared."""
    if len(named) < 2:
        raise ProbingError("give two maps or more (probing importance results of one model, one a pair set)",
                           source="--across")
    first_path, first = named[0]
    for path, result in named[1:]:
        differs = model_difference(result["model"], first["model"])
        if differs:
            raise ProbingError(f"is not a map of {first_path}'s model ({differs}); compare one model's heads",
                               source=path)
        if result["config"]["metric"] != first["config"]["metric"]:
            raise ProbingError(f"measures {result['config']['metric']}, {first_path} {first['config']['metric']}: "
                               "compare maps of one metric", source=path)
    seen: dict[str, str] = {}
    for path, result in named:
        label = set_label(result)
        if label in seen:
            raise ProbingError(f"measures {label}, as {seen[label]} does: give one map per set of units", source=path)
        seen[label] = path
    if part is None:
        part = default_part(first["config"]["metric"], first["metric"]["parts"])
        if part is None:
            raise ProbingError(f"{first['config']['metric']} has parts {', '.join(first['metric']['parts'])}: name "
                               "the one to compare", source="--part")
    for path, result in named:
        if part not in result["map"]:
            raise ProbingError(f"has no part {part!r} (it has {', '.join(result['map'])})", source=path)
        if any(value is None for row in result["map"][part]["harm"] for value in row):
            raise ProbingError(f"has no unit of part {part!r}, so no head has a harm on it", source=path)
    return part


def across(named: list[tuple[str, dict]], *, part: str | None = None, most: int = DEFAULT_MOST_HARMFUL,
           permutations: int = 10_000, seed: int = 0) -> dict:
    """The comparison of importance maps ``named`` [(path, result)] of one model on ``part`` (default: the metric's
    primary part): the rho matrix with within-layer permutation p-values and Holm, and the heads most harmful in
    several maps (``most`` per map)."""
    part = check_maps(named, part)
    results = [result for _, result in named]
    model = results[0]["model"]
    layers, heads = model["num_layers"], model["num_heads"]
    labels = [set_label(result) for result in results]
    languages = [language_of_set(result) for result in results]
    harms = np.array([result["map"][part]["harm"] for result in results], dtype=np.float64)  # [map, layer, head]
    flat = harms.reshape(len(results), -1)
    rho = rho_matrix(flat)
    strata = np.repeat(np.arange(layers), heads)
    ranked = average_ranks(flat, tie=TIE)  # ranked once: ranking ranks again changes nothing
    p = np.full(rho.shape, np.nan)
    for first in range(len(results) - 1):
        later = list(range(first + 1, len(results)))
        permuted = permuted_spearman(ranked[first], ranked[later].T, strata, count=permutations, seed=seed)
        for column, second in enumerate(later):
            if np.isfinite(rho[first, second]):
                p[first, second] = p[second, first] = permutation_p(rho[first, second], permuted[:, column],
                                                                     higher_is_better=False)
    pairs = [(a, b) for a in range(len(results)) for b in range(a + 1, len(results))]
    adjusted = dict(zip(pairs, holm([_number(p[a, b]) for a, b in pairs])))
    matrix = {labels[a]: {labels[b]: None if a == b else {
        "rho": _number(rho[a, b]), "p_value": _number(p[a, b]), "p_adjusted": adjusted[min(a, b), max(a, b)]}
        for b in range(len(results))} for a in range(len(results))}
    top = {label: most_harmful(grid, most) for label, grid in zip(labels, harms)}
    return {
        "method": METHOD,
        "model": {key: model.get(key) for key in ("name", "name_or_path", *MODEL_KEYS)},
        "metric": results[0]["config"]["metric"], "part": part, "heads": layers * heads,
        "permutations": {"count": permutations, "seed": seed, "within": "layer", "sided": "same heads"},
        "most_harmful": most,
        "sets": [{"label": label, "language": language, "path": path, "units": result["input"]["units_used"],
                  "created": result["created"]}
                 for (path, result), label, language in zip(named, labels, languages)],
        "matrix": matrix,
        "mean_rho": mean_rho(rho, languages),
        "top": {label: [{"layer": layer, "head": head, "harm": float(harms[i, layer, head])}
                        for layer, head in found] for i, (label, found) in enumerate(top.items())},
        "shared": shared_heads(top, dict(zip(labels, languages))),
    }


def mean_rho(rho, languages: list[str]) -> dict:
    """The mean rho over pairs of maps of two languages, and over pairs of one language (two sets of one language
    say how far the harm agrees when only the pairs differ: the ceiling for two languages); None where no pair.

    >>> mean_rho(np.array([[1.0, 0.5, 0.1], [0.5, 1.0, 0.3], [0.1, 0.3, 1.0]]), ["de", "de", "fr"])
    {'across_languages': 0.2, 'within_language': 0.5, 'pairs_across': 2, 'pairs_within': 1}
    """
    across_pairs, within = [], []
    for a in range(len(languages)):
        for b in range(a + 1, len(languages)):
            if np.isfinite(rho[a, b]):
                (within if languages[a] == languages[b] else across_pairs).append(float(rho[a, b]))
    return {"across_languages": round(float(np.mean(across_pairs)), 12) if across_pairs else None,
            "within_language": round(float(np.mean(within)), 12) if within else None,
            "pairs_across": len(across_pairs), "pairs_within": len(within)}


def shared_heads(top: dict[str, list[tuple[int, int]]], languages: dict[str, str]) -> list[dict]:
    """Every head among the most harmful of some map: the maps and languages it is so in, most maps first (then
    most languages, then layer and head).

    >>> shared_heads({"a": [(0, 1)], "b": [(0, 1), (1, 0)]}, {"a": "de", "b": "fr"})[0]
    {'layer': 0, 'head': 1, 'sets': ['a', 'b'], 'languages': ['de', 'fr']}
    """
    found: dict[tuple[int, int], list[str]] = {}
    for label, heads in top.items():
        for head in heads:
            found.setdefault(head, []).append(label)
    rows = [{"layer": layer, "head": head, "sets": labels,
             "languages": sorted({languages[label] for label in labels})} for (layer, head), labels in found.items()]
    return sorted(rows, key=lambda row: (-len(row["sets"]), -len(row["languages"]), row["layer"], row["head"]))


def _number(value) -> float | None:
    return float(value) if np.isfinite(value) else None
