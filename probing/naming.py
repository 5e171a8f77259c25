"""How heads, directions and offsets are written for people.

People read layers and heads from 1, as in the paper ("8-10" is layer 8,
head 10); result files index from 0. Every table, plot, option and page goes
through these functions, so the two countings never mix.

>>> head_name(7, 9), head_name(7, 9, "head_to_dep")
('8-10', '8-10 head->dep')
>>> parse_head_names("3-5,7-1", num_layers=12, num_heads=12)
[(2, 4), (6, 0)]
>>> offset_name(-2), offset_name(1)
('-2', '+1')
>>> percent_with_interval(0.868, [0.851, 0.884]), percent_with_interval(0.012, [-0.004, 0.03], signed=True)
('86.8 [85.1, 88.4]', '+1.2 [-0.4, +3.0]')
"""

from __future__ import annotations

from probing.errors import ProbingError

DIRECTIONS = ("dep_to_head", "head_to_dep")
"""The two directions a head can predict in, and their order on every direction axis."""

ARROWS = {"dep_to_head": "dep->head", "head_to_dep": "head->dep", "causal": "later->earlier"}
"""Plain-text arrows (the paper writes head<-dep for head_to_dep)."""

WORDS = {"dep_to_head": "dependent → head", "head_to_dep": "head → dependent"}
"""The directions in words, for figures and pages."""


def head_name(layer: int, head: int, direction: str | None = None) -> str:
    """``layer-head`` counted from 1, with the direction's arrow when given."""
    name = f"{layer + 1}-{head + 1}"
    return name if direction is None else f"{name} {ARROWS[direction]}"


def heldout_title(level: float, chosen_on: str = "dev", reported_on: str = "test") -> str:
    """The first line of every held-out table: the numbers to cite, and how they were made (the two sides as
    :func:`selection_sides` names them).

    >>> heldout_title(0.95)
    'held out: chosen on dev, reported on test, 95% intervals'
    >>> heldout_title(0.95, "the even half", "the odd half")
    'held out: chosen on the even half, reported on the odd half, 95% intervals'
    """
    return f"held out: chosen on {chosen_on}, reported on {reported_on}, {100 * level:.0f}% intervals"


def selection_sides(chosen_on: dict, reported_on: dict) -> tuple[str, str]:
    """What a held-out title calls the sentences a head was chosen on and those it is reported on, from their
    result blocks: ``dev`` and ``test``, or the halves of a treebank with one split (PUD) by name.

    >>> selection_sides({"half": {"half": "even"}}, {"half": {"half": "odd"}})
    ('the even half', 'the odd half')
    >>> selection_sides({"path": "en_ewt:dev"}, {"path": "en_ewt:test"})
    ('dev', 'test')
    """
    halves = [(block.get("half") or {}).get("half") for block in (chosen_on, reported_on)]
    chosen, reported = (f"the {half} half" if half else split for half, split in zip(halves, ("dev", "test")))
    return chosen, reported


def offset_name(offset: int) -> str:
    """A positional baseline, signed: ``+1`` is the next word."""
    return f"{offset:+d}"


def parse_head_names(text: str, *, num_layers: int, num_heads: int, option: str = "--heads") -> list[tuple[int, int]]:
    """``"3-5,7-1"`` (from 1) -> ``[(2, 4), (6, 0)]`` (from 0), checked against the model's shape."""
    heads = []
    for part in text.split(","):
        try:
            layer, head = (int(piece) for piece in part.strip().split("-"))
        except ValueError:
            raise ProbingError(
                f"expected LAYER-HEAD pairs such as 3-5,7-1 (counted from 1), got {part.strip()!r}", source=option
            ) from None
        if not (1 <= layer <= num_layers and 1 <= head <= num_heads):
            raise ProbingError(
                f"head {layer}-{head} does not exist: the model has {num_layers} layers of {num_heads} heads "
                "(counted from 1)",
                source=option,
            )
        if (layer - 1, head - 1) not in heads:
            heads.append((layer - 1, head - 1))
    return heads


def percent(value: float | None, *, signed: bool = False, decimals: int = 1) -> str:
    """A fraction in percent with one decimal (``86.8``; ``+1.2`` when ``signed``); ``-`` for no value."""
    if value is None:
        return "-"
    return f"{100 * value:{'+' if signed else ''}.{decimals}f}"


SCALES = ("percent", "points", "nats", "coefficient")
"""How a table cell's number reads: a fraction in percent, a signed difference of fractions in percentage
points, a signed difference in nats (a loss), or a signed coefficient between -1 and 1 (a rank correlation)."""


def scaled(value: float | None, scale: str = "percent", *, decimals: int | None = None) -> str:
    """``value`` on its ``scale`` (:data:`SCALES`): ``86.8``, ``-1.2`` (points), ``+0.012`` (nats), ``+0.41``
    (a coefficient), with ``decimals`` digits after the point where given (else 1 in percent and points, 3 in
    nats, 2 for a coefficient).

    >>> scaled(0.868), scaled(-0.012, "points"), scaled(0.0123, "nats"), scaled(0.4123, "coefficient")
    ('86.8', '-1.2', '+0.012', '+0.41')
    """
    if scale in ("nats", "coefficient"):
        places = (3 if scale == "nats" else 2) if decimals is None else decimals
        return "-" if value is None else f"{value:+.{places}f}"
    return percent(value, signed=scale == "points", decimals=1 if decimals is None else decimals)


def p_value_text(p: float | None) -> str:
    """A p-value as every table and terminal writes it: two significant digits, so that the smallest a
    permutation test can give, 1 / (1 + draws), reads as itself (``0.0099`` for 100 draws), never as 0;
    ``-`` for none.

    >>> p_value_text(1 / 101), p_value_text(1 / 21), p_value_text(1.0), p_value_text(None)
    ('0.0099', '0.048', '1', '-')
    """
    return "-" if p is None else f"{p:.2g}"


def interval_text(interval, scale: str = "percent", *, decimals: int | None = None, missing: str = "-",
                  absent: str | None = None) -> str:
    """The one way an interval reads in a table, a terminal, a page or a figure: its ends on a scale
    (:func:`scaled`), ``[85.1, 88.4]``, ``[-2.0, -0.4]`` (points), ``[+0.010, +0.015]`` (nats). A missing end
    reads ``missing``, a missing interval ``absent`` (``missing`` unless given): ``ablate``'s tables write
    ``-``, the versus board's ``[no data]`` with ``no data`` ends, each kept exactly so.

    >>> interval_text([0.851, 0.884]), interval_text([-0.02, -0.004], "points"), interval_text(None)
    ('[85.1, 88.4]', '[-2.0, -0.4]', '-')
    >>> interval_text([0.01, None], "nats", decimals=4, missing="no data"), interval_text(None, absent="[no data]")
    ('[+0.0100, no data]', '[no data]')
    """
    if interval is None:
        return missing if absent is None else absent
    low, high = (missing if end is None else scaled(end, scale, decimals=decimals) for end in interval)
    return f"[{low}, {high}]"


def spread_text(percentiles, scale: str = "points") -> str:
    """The spread of random draws, which is no estimate's interval and never reads like one: their 2.5th and 97.5th
    percentiles on a scale (:func:`scaled`), ``draws 2.5-97.5%: -0.8 to +1.2``.

    >>> spread_text([-0.008, 0.012]), spread_text([-0.039, 0.739], "nats")
    ('draws 2.5-97.5%: -0.8 to +1.2', 'draws 2.5-97.5%: -0.039 to +0.739')
    """
    low, high = (scaled(end, scale) for end in percentiles)
    return f"draws 2.5-97.5%: {low} to {high}"


def percent_with_interval(value: float | None, interval=None, *, signed: bool = False) -> str:
    """``86.8 [85.1, 88.4]``: the one way every table, cell, page and figure writes a number with its interval
    (the bare number without an interval, ``-`` without a number)."""
    if value is None:
        return "-"
    text = percent(value, signed=signed)
    return f"{text} {interval_text(interval, 'points' if signed else 'percent')}" if interval else text
