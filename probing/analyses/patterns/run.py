"""Each head's attention pattern type as a library call (Kovaleva et al. 2019, section 4.1).

``patterns(ModelSpec(), InputSpec(pairs=True, limit=200), PassOptions(), PatternsOptions())`` is
``probing patterns --pairs --limit 200``.
"""

from __future__ import annotations

import csv

from probing.analyses.patterns.options import PatternsOptions
from probing.engine.options import PassOptions
from probing.engine.run import start_run
from probing.engine.specs import InputSpec, ModelSpec
from probing.errors import ProbingError


def patterns(model: ModelSpec, inputs: InputSpec, passes: PassOptions, options: PatternsOptions, *,
             start=start_run, samples: list | None = None) -> dict | None:
    """The patterns result of ``model`` over ``inputs``, with its agreement with ``options.hand_labels`` when
    given; None in a torchrun process other than rank 0. ``samples`` receives the first ``options.maps`` units'
    maps (what the command's figures draw; a result holds none)."""
    from probing.analyses.patterns.accumulator import PatternAccumulator
    from probing.analyses.patterns.report import add_agreement, check_labels_fit
    from probing.engine.readings import READINGS
    from probing.model.loading import display_name

    label_model = options.label_model or (display_name(model.model) if model.model else "all-MiniLM-L6-v2")
    labels = read_hand_labels(options.hand_labels, label_model) if options.hand_labels else None
    run = start(model, inputs.open(), passes, reads=(options.hand_labels,))
    loaded = run.loaded
    heads = READINGS[passes.attention].heads(loaded.num_heads)
    if labels is not None:
        check_labels_fit(labels, model=loaded.name, num_layers=loaded.num_layers, num_heads=heads,
                         source=options.hand_labels)
    accumulator = PatternAccumulator(loaded.num_layers, heads, keep_maps=options.maps)
    stats = run.run([accumulator], "pattern shares")
    if not run.is_main:
        return None
    result = run.result("patterns", stats, accumulator, {"maps": options.maps})
    if labels is not None:
        add_agreement(result, labels, label_model=label_model, source=options.hand_labels)
    if samples is not None:
        samples.extend(accumulator.samples)
    return result


def read_hand_labels(path: str, model: str) -> list[dict]:
    """The labelled heads of ``model`` in a hand-label CSV, read before any model time."""
    from probing.analyses.patterns.payload import TYPES

    rows = []
    try:
        with open(path, encoding="utf-8", newline="") as stream:
            reader = csv.DictReader(stream)
            for row in reader:
                if row.get("model") != model:
                    continue
                for column in ("layer", "head"):  # counted from 1, as the file's header says
                    value = row.get(column) or ""
                    if not (value.isascii() and value.isdigit() and int(value) >= 1):
                        raise ProbingError(f"{column} must be a number from 1, got {value!r}", source=path,
                                           line=reader.line_num)
                if row.get("label") not in TYPES:
                    raise ProbingError(f"label must be one of {', '.join(TYPES)}, got {row.get('label')!r}",
                                       source=path, line=reader.line_num)
                rows.append({**row, "line": reader.line_num})
    except OSError as error:
        raise ProbingError(f"cannot read hand labels: {error.strerror}", source=f"--hand-labels {path}") from None
    except (UnicodeDecodeError, csv.Error) as error:
        raise ProbingError(f"not a readable CSV file ({error})", source=f"--hand-labels {path}") from None
    if not rows:
        raise ProbingError(f"no labelled head of model {model!r} (set --label-model)", source=f"--hand-labels {path}")
    return rows
