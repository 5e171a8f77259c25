"""The terminal table of a minimal-pairs result (torch-free).

>>> result = {"overall": {"paradigms": 1, "pairs": 2, "accuracy": 0.5, "interval": [0.0, 1.0]},
...           "fields": {"syntax": {"paradigms": 1, "pairs": 2, "accuracy": 0.5, "interval": None}},
...           "paradigms": {"a": {"field": "syntax", "pairs": 2, "accuracy": 0.5, "interval": None}}}
>>> print(pairs_table(result).splitlines()[-1])
overall (mean of 1 paradigms)  -                          2  50.0 [0.0, 100.0]
"""

from __future__ import annotations

import numpy as np
from tabulate import tabulate

from probing.naming import percent_with_interval

PUBLISHED = {"GPT-2 large": 0.830, "LSTM": 0.698, "5-gram": 0.612}
"""BLiMP's own summary (Warstadt et al. 2020): the mean of the 67 paradigm accuracies of each model, on all
1,000 pairs of every paradigm, as its repository's corrected results give it (raw_results/summary/
models_summary.jsonl: gpt2 0.830, lstm 0.698, ngram 0.612; its README's errata of 16 August 2021 say the TACL
version's Tables 3 and 4 misreported some results). The GPT-2 the authors scored is GPT-2 large (774M
parameters: their jiant script's ``input_module=gpt2-large``)."""


W20_NOTE = ("[W20] Warstadt et al. 2020, BLiMP (TACL), the corrected summary in its repository (the published tables "
            "misreported some results): the mean of the 67 paradigms over all 1,000 pairs each; GPT-2 large has 774M "
            "parameters. How its scripts began a sentence (a context token or none) may differ from our rule.")
"""The note on the :data:`PUBLISHED` rows, on a board that shows them (one with a BLiMP row) and no other."""


def pairs_header(result: dict) -> str:
    """The line above a run's table: the model, the pairs (how many paradigms, ``--limit``, a shard), the token
    every sentence was scored after, and the intervals.

    >>> print(pairs_header({"model": {"name": "gpt2", "architecture": "GPT2LMHeadModel", "num_layers": 12,
    ...     "num_heads": 12}, "config": {"limit": 10, "context": "bos", "shard": None, "bootstrap": 1000},
    ...     "pairs": {"overall": {"paradigms": 2, "pairs": 20, "interval": [0.5, 0.9]}, "context_token": "<|endoftext|>"}}))
    gpt2 (GPT2LMHeadModel, 12x12) on BLiMP: 20 pairs of 2 paradigms (the first 10 of each, --limit 10); \
    each sentence scored after '<|endoftext|>' (--context bos); 95% Wilson intervals

    Pairs made from a treebank get a second line: what became of its subject arcs
    (probing.data.pair_sets.from_treebank.made_from_line).
    """
    model, config, pairs = result["model"], result["config"], result["pairs"]
    overall = pairs["overall"]
    name = model.get("name") or model["name_or_path"]
    which = f" (the first {config['limit']} of each, --limit {config['limit']})" if config.get("limit") else ""
    shard = config.get("shard")
    which += f", shard {shard['index']}/{shard['count']}" if shard else ""
    token = pairs.get("context_token")
    context = f"after {token!r}" if token is not None else "with no token before it (its first token unscored)"
    intervals = "95% Wilson intervals" if overall.get("interval") else "no intervals"
    header = (f"{name} ({model['architecture']}, {model['num_layers']}x{model['num_heads']}"
              f"{', random init' if model.get('random_init') else ''}) on {pairs_source(result)}: {overall['pairs']} "
              f"pairs of {overall['paradigms']} paradigms{which}; each sentence scored {context} (--context "
              f"{config.get('context', 'bos')}); {intervals}")
    made_from = (result.get("input") or {}).get("made_from")
    if made_from:
        from probing.data.pair_sets.from_treebank import made_from_line

        header += "\n" + made_from_line(made_from)
    return header


def pairs_source(result: dict) -> str:
    """Where a run's pairs came from: BLiMP (a result made before pair sets names none), another pair set by its
    title and name, or a user's own file, named with its sha256 and said to be unpinned.

    >>> pairs_source({"input": {"kind": "minimal_pairs", "commit": "3e56b06"}})
    'BLiMP'
    >>> pairs_source({"input": {"pair_set": "clams-de"}}), pairs_source({"input": {"pair_set": "de_pud:agreement"}})
    ('CLAMS German (clams-de)', 'de_pud:agreement (subject-verb agreement pairs made from the treebank)')
    >>> pairs_source({"input": {"path": "data/mine.jsonl", "sha256": "0123456789abcdef", "pinned": False}})
    'mine.jsonl (your own pairs, unpinned: sha256 0123456789ab)'
    """
    described = result.get("input") or {}
    if not described.get("pinned", True):
        name = described["path"].replace("\\", "/").rsplit("/", 1)[-1]
        return f"{name} (your own pairs, unpinned: sha256 {described['sha256'][:12]})"
    named = described.get("pair_set", "blimp")
    if named == "blimp":
        return "BLiMP"
    from probing.data.pair_sets.catalogue import pair_set

    chosen = pair_set(named)
    return chosen.title if chosen.title.startswith(named) else f"{chosen.title} ({named})"


def pairs_table(result: dict) -> str:
    """One row per paradigm (with its field and phenomenon), then per phenomenon (but one that is a paradigm of its
    own name), then per field, then the overall mean of the paradigm accuracies."""
    rows = [[uid, f"{entry['field']}: {entry['phenomenon']}" if entry.get("phenomenon") else entry["field"],
             entry["pairs"], percent_with_interval(entry["accuracy"], entry["interval"])]
            for uid, entry in result["paradigms"].items()]
    rows += [[f"phenomenon: {name}", f"{entry['paradigms']} paradigms", entry["pairs"],
              percent_with_interval(entry["accuracy"], entry["interval"])]
             for name, entry in result.get("phenomena", {}).items()
             if not (entry["paradigms"] == 1 and name in result["paradigms"])]  # a CLAMS file: its paradigm's row
    rows += [[f"field: {name}", f"{entry['paradigms']} paradigms", entry["pairs"],
              percent_with_interval(entry["accuracy"], entry["interval"])] for name, entry in result["fields"].items()]
    overall = result["overall"]
    rows.append([f"overall (mean of {overall['paradigms']} paradigms)", "-", overall["pairs"],
                 percent_with_interval(overall["accuracy"], overall["interval"])])
    return tabulate(rows, headers=["paradigm", "field: phenomenon", "pairs", "acc % [95% CI]"], tablefmt="plain",
                    colalign=("left", "left", "right", "right"), disable_numparse=True)


def leaderboard_tables(results: list[dict]) -> list:
    """BLiMP's part of a leaderboard (registered as the analysis's ``tables``): the models overall, then the
    paradigms that move with the context where a model was scored after more than one."""
    by_context = context_table(results)
    return [leaderboard_table(results)] + ([by_context] if by_context else [])


def leaderboard_table(results: list[dict]):
    """One row per intact causal LM: BLiMP overall (the mean of paradigm accuracies) and each field, with
    intervals; then BLiMP's published overall figures, quoted, for comparison."""
    from probing.report.board import Cell, Row, Table, result_label

    fields: list[str] = []
    for data in results:
        fields += [name for name in data["pairs"]["fields"] if name not in fields]
    columns = ["overall"] + fields
    # each model's rows together, in the order models come, and its contexts in context_order's
    first_seen: dict = {}
    for data in results:
        first_seen.setdefault(data["model"].get("fingerprint"), len(first_seen))
    results = sorted(results, key=lambda data: (first_seen[data["model"].get("fingerprint")], context_order(data)))
    rows = []
    for data in results:
        block, limit = data["pairs"], data["config"].get("limit")
        treebank = (f"{pairs_source(data)}, {block['overall']['paradigms']} paradigms"
                    + (f", first {limit} pairs each" if limit else "") + f", after {context_label(data)}")
        row = Row(result_label(data), "model", "all pairs", treebank)
        row.cells["overall"] = Cell(accuracy=block["overall"]["accuracy"], interval=block["overall"]["interval"],
                                    pairs=block["overall"]["pairs"])
        for name in fields:
            entry = block["fields"].get(name)
            row.cells[name] = None if entry is None else Cell(accuracy=entry["accuracy"], interval=entry["interval"],
                                                              pairs=entry["pairs"])
        rows.append(row)
    blimp = any(pairs_source(data) == "BLiMP" for data in results)  # BLiMP's figures say nothing of one's own pairs
    for model, accuracy in PUBLISHED.items() if blimp else ():
        row = Row(f"{model} [W20]", "reference", "all pairs", "BLiMP, 67 paradigms, 1,000 pairs each", rank="ref")
        row.cells["overall"] = Cell(accuracy=accuracy)
        rows.append(row)
    notes = [
        "overall: the mean of the paradigm accuracies (BLiMP's convention); a field: the share of its pairs right. "
        "A pair is right when log p(good) > log p(bad) (a tie is wrong), each sentence after one BOS token (EOS "
        "without one), as docs/minimal-pairs.md says.",
        "[low, high]: 95% Wilson score interval: a field's of the share of its pairs right, overall of the mean of "
        "the paradigm accuracies at the effective number of pairs (all pairs, when every paradigm has as many).",
        "A row scored with a limit (first N pairs of each paradigm) is not the full benchmark: its figures are "
        "estimates of it, with the interval that so few pairs allow.",
        *([W20_NOTE] if blimp else []),  # the note explains rows that only a board with BLiMP carries
        "Masked LMs have no minimal-pair score and no row here.",
        "after T: the token every sentence was scored after (its BOS by default, EOS without one; \"nothing\": "
        "the first token is not scored). An instruct model's BOS can be a chat-turn marker.",
        *context_notes(results),
    ]
    title = "BLiMP minimal pairs" if all(pairs_source(data) == "BLiMP" for data in results) else "Minimal pairs"
    return Table(columns, rows, notes, title=f"{title}: intact causal LMs", key="pairs", mean=False,
                 marks_best=False)


CONTEXT_MOVE = 0.02
"""A paradigm whose accuracy differs by at least this (2 points) between two contexts of one model is named in
the board's notes."""


def context_label(result: dict) -> str:
    """The token a result's sentences were scored after, as the board shows it.

    >>> context_label({"pairs": {"context_token": None}}), context_label({"pairs": {"context_token": "<s>"}})
    ('nothing', '<s>')
    """
    token = result["pairs"].get("context_token")
    return "nothing" if token is None else token


NOTED_MOVES = 5
"""How many of a model's moving paradigms the board's notes name; the table of paradigms by context has them all."""


def context_order(result: dict) -> int:
    """Where a run's context stands among a model's: its BOS (the default) first, then its EOS, a token named
    by ``--context``, and nothing last (a stable sort keeps the order given within each)."""
    context = result["config"].get("context", "bos")
    return {"bos": 0, "eos": 1, "none": 3}.get(context, 2)


def context_moves(results: list[dict]) -> list[tuple[list[dict], list[tuple[float, str]]]]:
    """For each model scored after more than one context (the same pairs in every run, or the comparison says
    nothing): its runs, and its paradigms whose accuracy moves by CONTEXT_MOVE or more between them, as (move,
    paradigm), largest move first.

    >>> run = lambda token, a: {"model": {"name": "m", "fingerprint": "f"}, "config": {"limit": None},
    ...     "pairs": {"context_token": token, "paradigms": {"p": {"accuracy": a}, "q": {"accuracy": 0.5}}}}
    >>> [[(round(move, 2), uid) for move, uid in moves] for _, moves in context_moves([run("<s>", 0.9), run(None, 0.8)])]
    [[(0.1, 'p')]]
    """
    by_model: dict[tuple, list[dict]] = {}
    for data in results:
        # The same model on the same pairs (the pair file's sha256, its limit): runs of one model on other pair
        # sets (CLAMS German beside CLAMS French, whose paradigms share names) are no context comparison.
        pairs_read = (data.get("input") or {}).get("sha256")
        key = (data["model"].get("fingerprint"), pairs_read, data["config"].get("limit"))
        by_model.setdefault(key, []).append(data)
    found = []
    for runs in by_model.values():
        if len(runs) < 2:
            continue
        runs = sorted(runs, key=context_order)
        moves = []
        for uid in runs[0]["pairs"]["paradigms"]:
            if all(uid in run["pairs"]["paradigms"] for run in runs):
                values = [run["pairs"]["paradigms"][uid]["accuracy"] for run in runs]
                if max(values) - min(values) >= CONTEXT_MOVE - 1e-12:
                    moves.append((max(values) - min(values), uid))
        if moves:
            found.append((runs, sorted(moves, key=lambda move: (-move[0], move[1]))))
    return found


def context_notes(results: list[dict]) -> list[str]:
    """For each model scored after more than one context: how many paradigms move by CONTEXT_MOVE or more
    between them, naming the NOTED_MOVES largest with their accuracies.

    >>> run = lambda token, a: {"model": {"name": "m", "fingerprint": "f"}, "config": {"limit": None},
    ...     "pairs": {"context_token": token, "paradigms": {"p": {"accuracy": a, "pairs": 10}}}}
    >>> context_notes([run("<s>", 0.9), run(None, 0.8)])
    ['m, paradigms that move with the context (accuracy % after <s> / nothing): p 90.0 / 80.0']
    """
    notes = []
    for runs, moves in context_moves(results):
        contexts = " / ".join(context_label(run) for run in runs)
        listed = "; ".join(f"{uid} " + " / ".join(f"{100 * run['pairs']['paradigms'][uid]['accuracy']:.1f}"
                                                 for run in runs) for _, uid in moves[:NOTED_MOVES])
        more = len(moves) - NOTED_MOVES
        rest = (f"; {more} more move by {100 * CONTEXT_MOVE:.0f} to {100 * moves[NOTED_MOVES][0]:.1f} points "
                "(the table of paradigms by context)") if more > 0 else ""
        notes.append(f"{runs[0]['model']['name']}, paradigms that move with the context (accuracy % after "
                     f"{contexts}): {listed}{rest}")
    return notes


MOVE = "move"
"""The context table's last column: the highest context's accuracy minus the lowest's, with a paired interval."""


def paired_move(runs: list[dict], uids: list[str], level: float = 0.95) -> tuple[float, list[float] | None]:
    """The move of the mean accuracy of paradigms ``uids`` (one paradigm's own; all of them: BLiMP overall) across
    ``runs`` (the same pairs after other contexts): the highest run's mean minus the lowest's, and its paired 95%
    percentile bootstrap interval, each replicate resampling each paradigm's pairs, the same in both runs (the
    first run's seed and draws: probing.analyses.pairs.accuracy.paradigm_draws), and taking the mean over them.

    >>> run = lambda right: {"config": {"bootstrap": 200, "seed": 0},
    ...                      "pairs": {"paradigms": {"p": {"accuracy": sum(right) / 4, "right": right}}}}
    >>> paired_move([run([True, True, True, False]), run([True, True, True, False])], ["p"])  # paired: no spread
    (0.0, [0.0, 0.0])
    >>> move, (low, high) = paired_move([run([True, True, True, False]), run([True, False, False, False])], ["p"])
    >>> move, 0.0 <= low <= move <= high <= 1.0
    (0.5, True)
    """
    from probing.analyses.pairs.accuracy import paradigm_draws
    from probing.stats.intervals import interval_pair, percentile_interval

    means = [float(np.mean([run["pairs"]["paradigms"][uid]["accuracy"] for uid in uids])) for run in runs]
    high, low = int(np.argmax(means)), int(np.argmin(means))
    move = means[high] - means[low]
    bootstrap, seed = runs[0]["config"].get("bootstrap") or 0, runs[0]["config"].get("seed") or 0
    order = list(runs[0]["pairs"]["paradigms"])
    differences = np.zeros(bootstrap)  # [replicate]: the mean over paradigms of higher - lower
    for uid in uids:
        bits = [runs[number]["pairs"]["paradigms"][uid].get("right") for number in (high, low)]
        if not bootstrap or any(right is None for right in bits):
            return move, None
        draws = paradigm_draws(len(bits[0]), bootstrap, seed, order.index(uid))
        higher, lower = (np.asarray(right, dtype=np.float64)[draws].mean(axis=1) for right in bits)
        differences += (higher - lower) / len(uids)
    return move, interval_pair(percentile_interval(differences, level))


def context_table(results: list[dict]):
    """BLiMP overall and the paradigms that move with the context, one row each (overall first, then the largest
    move first): a column per context the model was scored after, each cell with its own interval, and the move
    with its paired interval; None when no model was scored after two contexts. The overall row is left out when
    the runs did not score the same paradigms (their means would not be of the same pairs)."""
    from probing.report.board import Table

    found = context_moves(results)
    if not found:
        return None
    columns: list[str] = []
    rows = []
    for runs, moves in found:
        named = {f"after {context_label(run)}": run for run in runs}
        columns += [column for column in named if column not in columns]
        uids = list(runs[0]["pairs"]["paradigms"])
        if all(set(run["pairs"]["paradigms"]) == set(uids) for run in runs):
            overall = {column: run["pairs"]["overall"] for column, run in named.items()}
            rows.append(_context_row(runs, overall, uids, f"overall, the mean of {len(uids)} paradigms"))
        for _, uid in moves:
            entries = {column: run["pairs"]["paradigms"][uid] for column, run in named.items()}
            pairs = next(iter(entries.values())).get("pairs")
            rows.append(_context_row(runs, entries, [uid], f"{uid}" + (f", {pairs:,} pairs" if pairs else "")))
    notes = [
        f"A paradigm is listed when its accuracy moves by {100 * CONTEXT_MOVE:.0f} points or more between the "
        "contexts one model was scored after (the same pairs in each), largest move first; after T: the token "
        "every sentence was scored after (\"nothing\": the first token is not scored, so a pair whose sentences "
        "differ in their first word is judged on the rest).",
        "[low, high]: 95% intervals: each context's own, Wilson's, and for the move (the highest context's accuracy "
        "minus the lowest's) a paired percentile bootstrap one, every replicate resampling the same pairs in both; *: "
        "the move's interval reaches 0.",
        "overall: the mean of the paradigm accuracies (BLiMP's convention); its move's replicates resample every "
        "paradigm's pairs and take the mean. A context picked as the best of these on these very pairs is a choice "
        "made on the data it is reported on: its move is a paired difference, with no allowance for the choice.",
    ]
    measures = {**{column: "accuracy" for column in columns}, MOVE: MOVE}
    return Table([*columns, MOVE], rows, notes, title="BLiMP overall and the paradigms that move with the context",
                 key="pairs-context", mean=False, marks_best=False, measures=measures)


def _context_row(runs: list[dict], entries: dict, uids: list[str], what: str):
    """One row of the context table: ``entries`` (column -> a summary or paradigm entry of each run), each with
    its interval, and the move of the mean over ``uids`` with its paired interval."""
    from probing.report.board import Cell, Row, result_label

    row = Row(result_label(runs[0]), "model", "all pairs", what)
    row.cells = {column: Cell(accuracy=entry["accuracy"], interval=entry.get("interval"), pairs=entry.get("pairs"))
                 for column, entry in entries.items()}
    move, interval = paired_move(runs, uids)
    row.cells[MOVE] = Cell(accuracy=move, interval=interval, scale="points",
                           clearly_better=None if interval is None else interval[0] > 0)
    return row


class PairsAccumulator:
    """The parts of a run split by ``--shard I/N`` added up: each paradigm's log-probabilities put back in file
    order (part i holds the places i, i + N, ...), and the accuracies and intervals computed again from them, as
    one run would have (the same pairs in the same order, so the same bootstrap draws).

    >>> part = lambda i: {"config": {"shard": {"index": i, "count": 2}, "bootstrap": 0, "seed": 0},
    ...     "pairs": {"context_token": "<s>", "paradigms": {"a": {"field": "syntax", "log_p_good": [float(i)],
    ...                                                          "log_p_bad": [0.5]}}}}
    >>> total = PairsAccumulator.from_result(part(0))
    >>> total.merge(PairsAccumulator.from_result(part(1)))
    >>> total.result()["pairs"]["paradigms"]["a"]["right"]
    [False, True]
    """

    def __init__(self, shard: dict, bootstrap: int, seed: int, context_token, paradigms: dict):
        self.count = shard["count"]
        self.bootstrap, self.seed, self.context_token = bootstrap, seed, context_token
        self.parts = {shard["index"]: paradigms}  # shard index -> uid -> that part's paradigm entry

    @classmethod
    def from_result(cls, result: dict) -> "PairsAccumulator":
        from probing.errors import ProbingError

        config = result["config"]
        if config.get("shard") is None:  # merge_results says which file; this guards direct use
            raise ProbingError("a whole run, not a part of one: minimal-pairs results merge only as --shard parts")
        return cls(config["shard"], config["bootstrap"], config["seed"], result["pairs"]["context_token"],
                   result["pairs"]["paradigms"])

    def count_options(self) -> dict:
        """What the parts of one run share (probing.results.merging compares them): the split, the bootstrap's
        draws and the context token."""
        return {"count": self.count, "bootstrap": self.bootstrap, "seed": self.seed, "context_token": self.context_token}

    def merge(self, other: "PairsAccumulator") -> None:
        self.parts.update(other.parts)

    def result(self) -> dict:
        from probing.analyses.pairs.accuracy import accuracies
        from probing.data.minimal_pairs import MinimalPair

        pairs, good, bad = [], [], []
        for uid in self.parts[min(self.parts)]:
            entries = [self.parts[index][uid] for index in sorted(self.parts)]
            field, term = entries[0]["field"], entries[0].get("phenomenon", "")
            for place in range(sum(len(entry["log_p_good"]) for entry in entries)):
                entry = entries[place % self.count]
                pairs.append(MinimalPair(uid, field, "", "", term))
                good.append(entry["log_p_good"][place // self.count])
                bad.append(entry["log_p_bad"][place // self.count])
        payload = accuracies(pairs, good, bad, bootstrap=self.bootstrap, seed=self.seed)
        payload["context_token"] = self.context_token
        return {"pairs": payload}
