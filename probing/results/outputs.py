"""A result written with its figures beside it: the one path of ``probing NAME --output A.json`` and of
``probing.run("NAME", output="A.json")``, so that the two write the same files.

An analysis that draws names, on its command's registry record (``figures=``), a function of its options dataclass
that gives its :class:`Figures`; whoever writes the result checks each figure's path before any model time
(:func:`checked_figure_path`) and then calls :func:`write_with_figures`.

>>> figure_path("runs/s.json", "entropy", "svg").as_posix()
'runs/s-entropy.svg'
>>> drawn = []
>>> figures = Figures(("toy",), draw=lambda result, path_of: [path_of("toy")])
>>> write_with_figures({}, figures, write=lambda result: drawn.append("result") or "a.json", path_of=str)
['toy']
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Figures:
    """The figures an analysis draws beside its result.

    ``names``: the figures always drawn, whose paths are checked before any model time; ``draw(result, path_of)``
    draws them (and any others, such as one per layer, each where ``path_of(name)`` says) and gives the paths
    drawn; ``first``: drawn before the result is written, so that a failure to draw leaves no result behind;
    ``extra``: keywords for the analysis's library function, for what its pass keeps for the figures alone
    (patterns: the units' maps, which no result holds).
    """

    names: tuple[str, ...] = ()
    draw: Callable[[dict, Callable[[str], Path]], list] | None = None
    first: bool = False
    extra: dict = field(default_factory=dict)


def figure_path(output: str | Path, name: str, figure_format: str) -> Path:
    """Where figure ``name`` of the result at ``output`` goes: beside it, named after it (``surface.json`` ->
    ``surface-NAME.png``)."""
    output = Path(output)
    return output.with_name(f"{output.stem}-{name}.{figure_format}")


def checked_figure_path(output: str | Path, name: str, figure_format: str, *, option: str = "figure beside --output",
                        inputs: Iterable[str | Path] = (), follow_symlinks: bool = False) -> Path:
    """:func:`figure_path`, refused (probing.atomic.check_output_path) when it is one of ``inputs`` or a file that
    is no earlier figure; a followed symbolic link gives its target."""
    from probing.atomic import check_output_path, figure_of

    path = figure_path(output, name, figure_format)
    return check_output_path(path, option=option, inputs=inputs, follow_symlinks=follow_symlinks,
                             replaces=figure_of(path))


def write_with_figures(result: dict, figures: Figures, *, write: Callable[[dict], object],
                       path_of: Callable[[str], Path]) -> list:
    """``write(result)`` (what it wrote, or None when nothing was) and the figures of ``figures`` beside it,
    drawn first when ``figures.first`` says so, else only once the result is written; the figures' paths."""
    draw = figures.draw
    drawn = draw(result, path_of) if draw and figures.first else []
    if write(result) and draw and not figures.first:
        drawn = draw(result, path_of)
    return drawn
