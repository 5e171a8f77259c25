"""Heads across languages: a head chosen in one language, scored in another (docs/languages.md section 3).

Every held-out probe result of a language holds the counts of *every* head on its report half, so a head
chosen in language A is scored in language B from B's result alone, with no model pass. The transfer of
relation R from A to B is the accuracy, on B's report half, of the head and direction A chose on its
choice half; the diagonal is the ordinary held-out figure. Beside each column: B's own held-out head, and
B's own best offset (chosen on B's choice half, reported on its report half), because word order decides
which offset wins. Intervals: B's bootstrap replicates (the same sentences for every row of a column).

Pure numpy on result dicts (no torch).

>>> from probing.testing import planted_language_result
>>> de = planted_language_result("de_pud", chosen=(0, 1, "dep_to_head"), correct={(0, 1): 6, (1, 0): 3}, total=10)
>>> zh = planted_language_result("zh_pud", chosen=(1, 0, "dep_to_head"), correct={(0, 1): 2, (1, 0): 5}, total=10)
>>> matrix = transfer([de, zh])["relations"]["dobj"]["matrix"]
>>> [[round(matrix[a][b]["accuracy"], 2) for b in ("de_pud", "zh_pud")] for a in ("de_pud", "zh_pud")]
[[0.6, 0.2], [0.3, 0.5]]
"""

from __future__ import annotations

from pathlib import Path

from probing.errors import ProbingError
from probing.naming import DIRECTIONS
from probing.stats.intervals import LEVEL, bootstrap_arrays, head_vs_baseline

METHOD = (
    "matrix[A][B]: accuracy on B's report half of the head and direction chosen on A's choice half (ties: lower "
    "layer, lower head, dep_to_head first); the diagonal is each language's held-out figure; own: B's held-out "
    "head and best offset; intervals: percentile bootstrap over B's report-half sentences; layers and heads from 0"
)


def language_of(result: dict) -> str:
    """The treebank a held-out result reports on, without its half or split (``de_pud`` for ``de_pud:odd``).

    >>> language_of({"treebank": {"path": "ko_pud:odd"}})
    'ko_pud'
    """
    path = result["treebank"]["path"]
    name = path.split(":", 1)[0]
    return Path(name).name.split("-ud-", 1)[0] if name.endswith(".conllu") else name


def transfer(results: list[dict], level: float = LEVEL) -> dict:
    """The transfer object of per-language held-out results of one model (docs/languages.md section 3)."""
    if not results:
        raise ProbingError("no result given", source="RESULT")
    _check_together(results)
    languages = [language_of(result) for result in results]
    by_language = dict(zip(languages, results))
    arrays = {language: bootstrap_arrays(result) for language, result in by_language.items()}
    relations = [name for name in results[0]["relations"] if all(name in r["relations"] for r in results)]
    first = results[0]["model"]
    return {
        "method": METHOD,
        "level": level,
        "model": {key: first.get(key) for key in ("name_or_path", "name", "fingerprint", "random_init")},
        "languages": languages,
        "relations": {name: _relation(name, by_language, arrays, level) for name in relations},
    }


def _relation(name: str, by_language: dict[str, dict], arrays: dict, level: float) -> dict:
    chosen = {language: _chosen(result, name) for language, result in by_language.items()}
    matrix, own, pairs = {}, {}, {}
    for target, result in by_language.items():
        pairs[target] = result["relations"][name]["total"]
        heldout = result["heldout"]["relations"][name]["heldout"]
        own[target] = {"head": heldout["head"], "offset": heldout["baseline"]}
    for source in by_language:
        matrix[source] = {target: _score(chosen[source], result, name, arrays[target], level)
                          for target, result in by_language.items()}
    return {"pairs": pairs, "chosen": chosen, "matrix": matrix, "own": own}


def _chosen(result: dict, name: str) -> dict | None:
    """The head a language chose on its choice half: {layer, head, direction, accuracy} (None: no pairs there)."""
    dev = result["heldout"]["relations"][name]["dev"]
    return None if dev["head"] is None else {key: dev["head"][key] for key in ("layer", "head", "direction", "accuracy")}


def _score(chosen: dict | None, result: dict, name: str, arrays, level: float) -> dict | None:
    """Accuracy of ``chosen`` on ``result``'s report half, with its interval; None when either side has no pairs."""
    entry = result["relations"][name]
    if chosen is None or entry["total"] == 0:
        return None
    layer, head, direction = chosen["layer"], chosen["head"], chosen["direction"]
    if layer >= len(entry["heads"][direction]) or head >= len(entry["heads"][direction][layer]):
        raise ProbingError(f"head {layer}-{head} is outside the model of {language_of(result)}", source="RESULT")
    scored = {"accuracy": entry["heads"][direction][layer][head] / entry["total"], "interval": None}
    if arrays is not None:
        relation = list(result["relations"]).index(name)
        offset = result["heldout"]["relations"][name]["heldout"]["baseline"]
        offsets = list(result["config"]["offsets"])
        index = offsets.index(offset["offset"]) if offset else 0
        found = head_vs_baseline(arrays["boot_total"], arrays["boot_heads"], arrays["boot_baselines"], relation,
                                 (DIRECTIONS.index(direction), layer, head), index, level)
        scored["interval"] = [float(found["head"][0]), float(found["head"][1])]
    return scored


def _check_together(results: list[dict]) -> None:
    """One model, held-out results, one result per language, the same scoring options."""
    for result in results:
        if result.get("analysis", "probe") != "probe" or "heldout" not in result:
            raise ProbingError(f"{result['treebank']['path']} is not a held-out probe result (score it with "
                               "--treebank NAME or --select-on)", source="RESULT")
    languages = [language_of(result) for result in results]
    repeated = sorted({language for language in languages if languages.count(language) > 1})
    if repeated:
        raise ProbingError(f"two results report on {', '.join(repeated)}; give one per language", source="RESULT")
    first = results[0]
    for result in results[1:]:
        for key in ("fingerprint", "random_init", "num_layers", "num_heads"):
            if result["model"].get(key) != first["model"].get(key):
                raise ProbingError(f"the results are not of one model ({key} differs between {languages[0]} and "
                                   f"{language_of(result)}); a transfer matrix compares one model's heads",
                                   source="RESULT")
        for key in ("offsets", "pooling", "attention"):
            if result["config"].get(key) != first["config"].get(key):
                raise ProbingError(f"{language_of(result)} was scored with another {key} than {languages[0]}",
                                   source="RESULT")
