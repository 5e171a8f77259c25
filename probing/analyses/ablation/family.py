"""The family a causal board tests, declared before it runs (no torch): which cells enter Holm, which cannot.

A **row** is one model, metric, relation and k; its **primary cell** is the one the row's question is about: the
loss; minimal pairs overall, not each phenomenon; the probe on the row's own relation, not ``all`` (near-duplicates
of it, which would count one question several times). Only primary cells are tested; the others show their raw p,
marked exploratory. A primary cell whose least reachable p, 1 / (1 + draws) (draws: the sets of the space when it
was enumerated exactly), cannot reach 0.05 / m' is **untestable at this size** and left out by Tarone's rule
(:func:`probing.stats.multiplicity.tarone`); Holm adjusts the cells left for each other, m of them.

**Sizing** (:func:`sizing`): the draws a row needs so that every row that can be made testable reaches 0.05 after
Holm, 1 + draws >= 20 m, and the matching that gives them: the layer-matched space when it holds that many sets,
else the chosen heads' layer bands, else none (a single head: its band holds a few dozen sets at most).

>>> cells = [FamilyCell("MiniLM det@4 probe", p=0.0008, draws=1200), FamilyCell("gemma det@1 loss", p=0.25, draws=3),
...          FamilyCell("MiniLM det@4 probe on all", p=0.0008, draws=1200, primary=False)]
>>> family = declare(cells)
>>> family.m_prime, family.m, [(cell.status, cell.adjusted) for cell in family.cells]
(1, 1, [('tested', 0.0008), ('untestable', None), ('exploratory', None)])
"""

from __future__ import annotations

from dataclasses import dataclass, field

from probing.stats.multiplicity import LEVEL, draws_needed, holm, reaches, tarone

TESTED, UNTESTABLE, EXPLORATORY, NO_TEST = "tested", "untestable", "exploratory", "no test"
"""What became of a cell: in the family and adjusted by Holm; a primary cell Tarone's rule left out; a cell that
is not its row's primary one (raw p only); a cell without a p (no unit, or no random set)."""


@dataclass
class FamilyCell:
    """One cell of a board with a permutation p: ``name`` says which (row and column), ``draws`` the random draws
    behind p (or the sets of an exact space). :func:`declare` sets ``status`` and ``adjusted``."""

    name: str
    p: float | None
    draws: int | None
    primary: bool = True
    status: str = ""
    adjusted: float | None = None

    @property
    def floor(self) -> float | None:
        """The least p this cell can reach, 1 / (1 + draws); None without draws.

        >>> FamilyCell("x", 0.5, draws=8).floor
        0.1111111111111111
        """
        return 1 / (1 + self.draws) if self.draws else None


@dataclass
class Family:
    """The cells of a board after :func:`declare`: Tarone's ``m_prime`` and the ``m`` cells Holm adjusted."""

    cells: list[FamilyCell]
    m_prime: int
    m: int
    level: float = LEVEL

    def having(self, status: str) -> list[FamilyCell]:
        return [cell for cell in self.cells if cell.status == status]


def declare(cells: list[FamilyCell], level: float = LEVEL) -> Family:
    """Sort ``cells`` into the family: Tarone's rule over the primary cells with a p, then Holm over those that
    can reach ``level`` / m' (their ``adjusted``); every cell gets its status. The cells are changed in place.

    >>> cells = [FamilyCell(str(i), p=0.004, draws=279) for i in range(14)] + [FamilyCell("k1", 0.11, 8)]
    >>> family = declare(cells)
    >>> family.m_prime, family.m, round(cells[0].adjusted, 3), cells[-1].status
    (14, 14, 0.056, 'untestable')
    """
    primary = [cell for cell in cells if cell.primary and cell.p is not None and cell.draws]
    m_prime = tarone([cell.draws for cell in primary], level)
    tested = [cell for cell in primary if reaches(cell.draws, m_prime, level)]
    for cell, adjusted in zip(tested, holm([cell.p for cell in tested])):
        cell.status, cell.adjusted = TESTED, adjusted
    for cell in cells:
        if cell.status != TESTED:
            cell.adjusted = None
            cell.status = (NO_TEST if cell.p is None or not cell.draws else UNTESTABLE if cell.primary
                           else EXPLORATORY)
    return Family(cells, m_prime, len(tested), level)


LAYER, BAND, ENOUGH, NEVER = "layer", "band", "enough", "never"
"""What a row needs (:func:`sizing`): more layer-matched draws; band-matched draws (its layer-matched space is too
small); nothing (its draws already reach); no draw of sets can make it testable (its band is too small too)."""


@dataclass
class Spaces:
    """A primary cell as sizing sees it: the draws it has, and how many distinct random sets its chosen heads
    allow layer-matched and band-matched (probing.analyses.ablation.versus.space_size)."""

    name: str
    draws: int
    layer_space: int
    band_space: int
    plan: str = field(default="")


@dataclass
class Sizing:
    """The family that draws can give: its ``m`` cells, the ``draws`` each needs (1 + draws >= 20 m), and every
    cell's ``plan`` (:data:`LAYER`, :data:`BAND`, :data:`ENOUGH` or :data:`NEVER`)."""

    cells: list[Spaces]
    m: int
    draws: int

    def having(self, plan: str) -> list[Spaces]:
        return [cell for cell in self.cells if cell.plan == plan]


def sizing(cells: list[Spaces], level: float = LEVEL) -> Sizing:
    """The draws that let every primary cell that can be made testable reach ``level`` after Holm over the cells
    so made, and how each gets them. The cells whose larger space (layer or band) holds fewer sets than the draws
    m cells need leave the family, which lowers the draws the others need: repeated until none leaves.

    >>> k4 = [Spaces(f"gemma {m} det@4", 81, 81, 91390) for m in ("lm", "probe")] + [
    ...     Spaces(f"SmolLM2 {m} det@4", 100, 4096, 3183545) for m in ("lm", "probe")] + [
    ...     Spaces(f"MiniLM probe {r}@4", 1200, 5445, 367290) for r in ("det", "nsubj")]
    >>> plan = sizing(k4 + [Spaces("gemma lm det@1", 3, 3, 7)])   # 7 cells would need 139 draws, 6 need 119
    >>> plan.m, plan.draws, [cell.plan for cell in plan.cells]
    (6, 119, ['band', 'band', 'layer', 'layer', 'enough', 'enough', 'never'])
    """
    candidates = list(cells)
    while True:
        needed = draws_needed(len(candidates), level)
        kept = [cell for cell in candidates if max(cell.draws, cell.layer_space, cell.band_space) >= needed]
        if len(kept) == len(candidates):
            break
        candidates = kept
    for cell in cells:
        cell.plan = (NEVER if cell not in candidates else ENOUGH if cell.draws >= needed
                     else LAYER if cell.layer_space >= needed else BAND)
    return Sizing(cells, len(candidates), needed)


def is_primary(metric: str, part: str, relation: str) -> bool:
    """Whether ``part`` of a versus block whose metric is ``metric`` (its name: loss, accuracy, probe) is the
    primary cell of a row of ``relation``: the loss and minimal pairs overall are; a BLiMP field or phenomenon is
    not; of the probe, the row's own relation only (``all`` counts the same pairs again, and more).

    >>> is_primary("loss", "loss", "det"), is_primary("accuracy", "overall", "det")
    (True, True)
    >>> is_primary("accuracy", "phenomenon:subject_verb_agreement", "nsubj"), is_primary("probe", "all", "det")
    (False, False)
    """
    if ":" in part:
        return False
    return part == relation if metric == "probe" else True


def p_text(cell: FamilyCell, exact: bool = False) -> str:
    """A cell's p as a board writes it, with what became of it: ``p=0.00083, Holm 0.0017: significant``,
    ``p=0.11 exact: untestable at this size (least p 0.11)``, ``p=0.0099, exploratory``.

    >>> p_text(declare([FamilyCell("a", 0.25, 3)]).cells[0], exact=True)
    'p=0.25 exact: untestable at this size (least p 0.25)'
    """
    from probing.naming import p_value_text
    from probing.stats.multiplicity import significant

    text = f"p={p_value_text(cell.p)}{' exact' if exact else ''}"
    if cell.status == TESTED:
        return f"{text}, Holm {p_value_text(cell.adjusted)}{': significant' if significant(cell.adjusted) else ''}"
    if cell.status == UNTESTABLE:
        return f"{text}: untestable at this size (least p {p_value_text(cell.floor)})"
    return f"{text}, exploratory" if cell.status == EXPLORATORY else text


def family_note(family: Family, where: str = "this board") -> str:
    """How ``where`` tested its cells: the declared family, Tarone's m', Holm's m, and whether any cell can be
    called significant.

    >>> print(family_note(declare([FamilyCell("a", 0.001, 1200), FamilyCell("b", 0.25, 3)])))
    Family: one primary cell per row and metric (the loss; minimal pairs overall; the probe on the row's own \
relation), 2 with a p. Tarone's rule: m' = 1, the least m' such that at most m' of them can reach 0.05 / m' \
(least p 1 / (1 + draws), or 1 / (1 + the space) when exact); 1 cannot and is untestable at this size. Holm \
adjusts the m = 1 cells left for each other; a cell is called significant (at 0.05) by its adjusted p only. The \
other cells (BLiMP's phenomena and fields, the probe on all) show their raw p, exploratory, and enter no test.
    """
    primary = [cell for cell in family.cells if cell.status in (TESTED, UNTESTABLE)]
    left_out = len(family.having(UNTESTABLE))
    if not primary:
        return (f"Family: one primary cell per row and metric; none of {where}'s has a p, so nothing is tested.")
    cannot = (f"; {left_out} cannot and {'is' if left_out == 1 else 'are'} untestable at this size" if left_out
              else "; every one can")
    holm_text = (f"Holm adjusts the m = {family.m} cells left for each other; a cell is called significant (at "
                 f"{family.level:g}) by its adjusted p only." if family.m else
                 f"No cell is left to test: nothing on {where} can be called significant, whatever its data (a cell "
                 f"needs 1 + draws >= 20 m to reach {family.level:g} after Holm over m cells).")
    return (f"Family: one primary cell per row and metric (the loss; minimal pairs overall; the probe on the row's own "
            f"relation), {len(primary)} with a p. Tarone's rule: m' = {family.m_prime}, the least m' such that at "
            f"most m' of them can reach {family.level:g} / m' (least p 1 / (1 + draws), or 1 / (1 + the space) when "
            f"exact){cannot}. {holm_text} The other cells (BLiMP's phenomena and fields, the probe on all) show their "
            "raw p, exploratory, and enter no test.")
