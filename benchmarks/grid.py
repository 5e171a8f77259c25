"""The ablation grid against its floor: what ``probing ablate --chosen`` costs beyond the forward passes it needs.

A grid of chosen-against-random conditions (each relation's top k heads on DEV, then matched random sets) is
run as ``probing ablate`` runs it: the engine's pass, conditions stacked, the layers below each group's lowest
disabled layer taken from the intact model's pass. Its **floor**, on the same batches with the same sharing, is
the sum over conditions of one forward pass from that condition's lowest disabled layer up (the intact model:
one whole pass), with nothing else: no head disabled, no metric, no bootstrap. The forward pass is what the
metric reads: the last hidden state and the LM head's logits at the positions the loss reads for ``--metric lm``,
every layer's attention up to the last one for ``--metric probe`` (stopped there, on the path the model's attention
is read by: fused where it can be).

    python -m benchmarks.heavy --only grid      # the two grids of GRIDS, on a few en_ewt test sentences

The ratio grid / floor is the median of paired repeats (grid and floor back to back in each).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

import torch

from benchmarks.common import Clock, Timings, model_folder, one_thread, the_batches, treebank_split

GRID_TARGET = 1.15
"""The whole grid at most 1.15 times its floor (issue 43)."""


@dataclass(frozen=True)
class Grid:
    """One model's grid: ``metric`` on ``limit`` sentences of ``units``, heads chosen on ``dev_limit`` of ``dev``."""

    model: str  # a short name of benchmarks.common.FOLDERS
    metric: str
    relations: tuple[str, ...] = ("det", "nsubj")
    sizes: tuple[int, ...] = (1, 4)
    draws: int = 10
    units: str = "en_ewt:test"
    limit: int = 20
    dev: str = "en_ewt:dev"
    dev_limit: int = 100
    seed: int = 0

    def command(self) -> str:
        """The ``probing ablate`` command this grid times."""
        return (f"probing ablate --model $PROBING_MODELS/<{self.model}> --metric {self.metric} --chosen "
                f"{' '.join(self.relations)} --k {' '.join(map(str, self.sizes))} --random {self.draws} --select-on "
                f"{self.dev} (first {self.dev_limit}) --treebank {self.units} --limit {self.limit}")


GRIDS = (Grid("minilm", "probe"), Grid("smollm2", "lm", limit=10))
"""MiniLM on the probe metric, SmolLM2 on its LM loss (on fewer sentences: it takes about 1 ms a token here)."""


def grid_conditions(loaded, grid: Grid) -> list:
    """The intact model, then each chosen set and its matched random sets, as ``ablate --chosen`` makes them."""
    from probing.analyses.ablation.conditions import INTACT, Condition
    from probing.analyses.ablation.versus import choose_sets, set_label
    from probing.analyses.probe.api import run_probe
    from probing.analyses.probe.config import ScoreConfig

    dev = run_probe(ScoreConfig.from_fields(model=loaded.name_or_path, treebank=grid.dev, limit=grid.dev_limit, bootstrap=0,
                                relations=tuple(grid.relations)), loaded=loaded)["relations"]
    sets = choose_sets(dev, grid.relations, grid.sizes, loaded.num_layers, loaded.num_heads, draws=grid.draws,
                       seed=grid.seed)
    return [INTACT] + [Condition(set_label(entry), entry["heads"]) for entry in sets]


def first_layers(conditions, num_layers: int) -> list[int]:
    """Each condition's lowest disabled layer (the intact model's: 0, a whole pass).

    >>> from probing.analyses.ablation.conditions import INTACT, Condition
    >>> first_layers([INTACT, Condition("a", ((3, 1), (1, 0)))], 6)
    [0, 1]
    """
    return [min((layer for layer, _ in condition.heads), default=0) for condition in conditions]


def metric_of(grid: Grid, conditions):
    from probing.analyses.ablation.metrics import METRICS

    return METRICS[grid.metric](relations=grid.relations)


def new_accumulator(loaded, grid: Grid, conditions):
    from probing.analyses.ablation.accumulator import AblationAccumulator

    metric = metric_of(grid, conditions)
    metric.setup(loaded)
    return AblationAccumulator(metric, conditions, loaded.num_layers, loaded.num_heads, bootstrap=1000,
                               seed=grid.seed, causal=loaded.is_causal)


def run_grid(loaded, grid: Grid, conditions, source) -> Clock:
    """The grid as ``probing ablate`` runs it (the engine's pass, 1000 bootstrap replicates)."""
    from probing.engine.passes import run_pass

    accumulator = new_accumulator(loaded, grid, conditions)
    with Clock() as clock:
        run_pass(loaded, source, [accumulator])
    return clock


def floor_groups(loaded, grid: Grid, conditions, batch, stacked: bool) -> list[tuple[int, int]]:
    """(lowest disabled layer, copies) of each pass after the intact model's on ``batch``: the run's own groups
    (``stacked``), or one pass per condition."""
    firsts = first_layers(conditions, loaded.num_layers)[1:]
    if not stacked:
        return [(first, 1) for first in firsts]
    copies = new_accumulator(loaded, grid, conditions[:1]).group_size(batch, loaded.device)
    groups = []
    for first in sorted(set(firsts)):
        count = firsts.count(first)
        groups += [(first, min(copies, count - start)) for start in range(0, count, copies)]
    return groups


def run_floor(loaded, grid: Grid, conditions, batches, stacked: bool = True) -> Clock:
    """The floor: per batch, the intact model's whole pass (its layer outputs recorded), then one pass of the
    layers from each condition's lowest disabled one up (those below reused), nothing disabled, nothing measured;
    conditions stacked as the run stacks them, or one pass each."""
    from probing.model.extraction import each_layer
    from probing.model.prefix import SharedPrefix

    prefix = SharedPrefix.find(loaded)
    if prefix is None:
        raise SystemExit(f"{loaded.name}: its layers cannot be shared, so the grid has no prefix floor")
    plans = [floor_groups(loaded, grid, conditions, batch, stacked) for batch in batches]

    def forward(batch, first: int, copies: int) -> None:
        ids = batch.input_ids.repeat(copies, 1).to(loaded.device)
        mask = batch.attention_mask.repeat(copies, 1).to(loaded.device)
        if grid.metric == "probe":
            each_layer(loaded, ids, mask, lambda layer, weights: None, first_layer=first)
        else:  # the last hidden state, and the LM head at the positions whose next token the loss reads
            hidden = loaded.base(input_ids=ids, attention_mask=mask).last_hidden_state
            scored = mask[:, 1:].bool() & ~batch.is_special[:, 1:].repeat(copies, 1).to(mask.device)
            loaded.model.get_output_embeddings()(hidden[:, :-1][scored])

    with Clock(loaded.device) as clock, torch.inference_mode():
        for batch, plan in zip(batches, plans):
            with prefix.recording():
                forward(batch, 0, 1)
            for first, copies in plan:
                with prefix.reusing(first, copies=copies):
                    forward(batch, first, copies)
    return clock


def measure_grid(grid: Grid, repeats: int, device: str = "cpu") -> dict | None:
    """The grid and its floor, ``repeats`` paired times; None when the checkpoint or treebank is not at hand."""
    from probing.analyses.ablation.metrics import METRICS
    from probing.data.inputs import InputSource
    from probing.model.loading import load_model

    folder = model_folder(grid.model)
    if folder is None or treebank_split(grid.units) is None or treebank_split(grid.dev) is None:
        return None
    loaded = load_model(folder, device=device, head=METRICS[grid.metric].head)
    conditions = grid_conditions(loaded, grid)
    source = InputSource.treebank(grid.units, limit=grid.limit)
    batches = the_batches(loaded, source)
    timings, cpu = Timings(), Timings()
    with one_thread(device):
        run_floor(loaded, grid, conditions[:3], batches)  # warm-up: first calls allocate and pick kernels
        for repeat in range(repeats):
            for name, run in (("grid", lambda: run_grid(loaded, grid, conditions, source)),
                              ("floor", lambda: run_floor(loaded, grid, conditions, batches)),
                              ("floor, one pass each", lambda: run_floor(loaded, grid, conditions, batches, False))):
                clock = run()
                timings.add(name, clock.wall)
                cpu.add(name, clock.cpu)
            print(f"  {grid.model} {grid.metric} repeat {repeat + 1}/{repeats}: "
                  + ", ".join(f"{name} {cpu.runs[name][-1]:.2f} s" for name in cpu.runs), file=sys.stderr, flush=True)
    firsts = first_layers(conditions, loaded.num_layers)
    lower = "floor" if cpu.median("floor") <= cpu.median("floor, one pass each") else "floor, one pass each"
    return {"grid": grid, "name": loaded.name, "layers": loaded.num_layers, "conditions": len(conditions) - 1,
            "units": sum(len(batch) for batch in batches), "batches": len(batches), "wall": timings, "cpu": cpu,
            "floor": lower, "ratio": cpu.ratio("grid", lower), "wall_ratio": timings.ratio("grid", lower),
            "mean_layers": sum(loaded.num_layers - first for first in firsts[1:]) / (len(firsts) - 1)}
