"""Probing while a model trains: a ``transformers.TrainerCallback`` that scores the live model.

:class:`ProbingCallback` scores the model being trained at each evaluation of
a ``transformers.Trainer`` (``on_evaluate``) on a small treebank slice, with
the model object in memory: nothing is saved or reloaded. For the scoring the
model is switched to eval mode and eager attention (the fused kernels it
trains with never return attention weights), and afterwards its training mode
and attention implementation are what they were (probing.model.loading.scoring_mode).
Each scoring is one ordinary probe run (probing.analyses.probe.api.run_probe) over the live
model wrapped by ``LoadedModel.from_live``. Nothing runs on the other steps.

The numbers go through the Trainer's own logging, so TensorBoard, W&B and
``trainer.state.log_history`` see them: per relation ``probing/REL`` (the best
head's accuracy, 0..1, in-sample on the slice) and ``probing/REL_offset`` (the
best fixed-offset baseline's). TensorBoard and W&B file keys that do not start
with ``eval_`` under ``train/``, so they show as ``train/probing/det``. The
Trainer gives callbacks no handle on itself; :meth:`ProbingCallback.attach`
gives it one, which ``trainer.log`` needs to reach the loggers. Without it the
numbers still land in ``state.log_history`` and in the evaluation's metrics,
and a warning says that the loggers did not get them.

Every scoring's full result is kept in ``callback.history`` as ``(step,
result)``; with ``output_dir`` each is also written there as
``probing-stepSTEP.json``, and the curve (probing.analyses.probe.curves) as
``probing-curve.csv``, ``.md`` and ``.png`` when training ends.

>>> from probing.analyses.probe.curves import CurvePoint
>>> logged_numbers([CurvePoint(40, "det", 12, "1-2 dep->head", 0.75, None, 1, 0.5, None, "in-sample best")])
{'probing/det': 0.75, 'probing/det_offset': 0.5}
"""

from __future__ import annotations

import warnings
from pathlib import Path

from transformers import TrainerCallback

from probing.analyses.probe.curves import curve, points_of, write_curve
from probing.errors import ProbingError

PREFIX = "probing/"
"""What every logged key starts with."""


def logged_numbers(points, prefix: str = PREFIX) -> dict[str, float]:
    """The scalars logged for one scoring: each relation's best head and best offset accuracy (0..1);
    a relation without pairs logs nothing."""
    numbers = {}
    for point in points:
        if point.accuracy is not None:
            numbers[f"{prefix}{point.relation}"] = point.accuracy
            numbers[f"{prefix}{point.relation}_offset"] = point.offset_accuracy
    return numbers


class ProbingCallback(TrainerCallback):
    """Score the model being trained on a treebank slice at every ``every``-th evaluation.

    ``treebank`` is a CoNLL-U file or a public treebank as ``NAME:SPLIT``
    (default: the project's sample treebank); ``limit`` its first N sentences;
    ``relations`` as for ``probing score``; ``bootstrap`` replicates for
    intervals in the kept results (0: none, the fastest). ``name`` names the
    run in results (default: the Trainer's run name). ``tokenizer`` is needed
    only when the Trainer has no ``processing_class``. Options are checked and
    the treebank is opened when the callback is made, before any training.

    Evaluations at a step already scored (several eval datasets, or a final
    ``trainer.evaluate()``) are not scored again. Only the main process scores
    (the others wait at their next collective step); a model sharded across
    processes (FSDP, DeepSpeed ZeRO-3) cannot be scored this way.
    """

    def __init__(self, treebank: str | None = None, *, limit: int | None = 200, relations=None, every: int = 1,
                 batch_size: int = 32, max_length: int | None = None, pool_from: str = "mean",
                 attention: str = "weights", bootstrap: int = 0, seed: int = 0, name: str | None = None,
                 tokenizer=None, output_dir: str | Path | None = None):
        from probing.analyses.probe.config import ScoreConfig
        from probing.data.inputs import open_input
        from probing.data.relations import DEFAULT_RELATIONS

        if not isinstance(every, int) or every < 1:
            raise ProbingError(f"must be a positive integer, got {every!r}", source="every")
        self.config = ScoreConfig.from_fields(
            treebank=treebank, relations=tuple(relations or DEFAULT_RELATIONS), limit=limit, batch_size=batch_size,
            max_length=max_length, pool_from=pool_from, attention=attention, bootstrap=bootstrap, seed=seed,
        ).validated()
        self.source_path = open_input(treebank, limit=limit).path  # a missing file fails now, not mid-training
        self.every = every
        self.name = name
        self.tokenizer = tokenizer
        self.output_dir = None if output_dir is None else Path(output_dir)
        if self.output_dir is not None:
            from probing.analyses.probe.curves import curve_paths, earlier_output
            from probing.atomic import check_output_path

            for path in curve_paths(self.output_dir / "probing.json").values():
                check_output_path(path, option="output_dir", inputs=[self.source_path], replaces=earlier_output(path))
        self.history: list[tuple[int, dict]] = []
        self._trainer = None
        self._evaluated_steps: list[int] = []
        self._warned = False

    # ------------------------------------------------------------------ wiring

    def attach(self, trainer) -> "ProbingCallback":
        """Add this callback to ``trainer`` (unless it is there already) and keep a handle on it, so that
        the numbers are logged with ``trainer.log`` (TensorBoard, W&B, ...). Returns the callback."""
        if self not in trainer.callback_handler.callbacks:
            trainer.add_callback(self)
        self._trainer = trainer
        return self

    def on_train_begin(self, args, state, control, processing_class=None, **kwargs):
        self._tokenizer_of(processing_class)  # no tokenizer: one clear error before the first step

    def on_evaluate(self, args, state, control, metrics=None, model=None, processing_class=None, **kwargs):
        step = state.global_step
        if step in self._evaluated_steps:
            return
        self._evaluated_steps.append(step)
        if (len(self._evaluated_steps) - 1) % self.every or not state.is_world_process_zero:
            return
        numbers = self.score(model, self._tokenizer_of(processing_class), step, run=self.name or _run_name(args))
        if metrics is not None:
            metrics.update(numbers)
        if self._trainer is not None:
            self._trainer.log(dict(numbers))
            return
        state.log_history.append({**numbers, "step": step})
        if not self._warned:
            self._warned = True
            warnings.warn("ProbingCallback was not attached to its Trainer (callback.attach(trainer)), so its "
                          "numbers are in state.log_history and the evaluation metrics but not in TensorBoard, "
                          "W&B or other loggers", stacklevel=2)

    def on_train_end(self, args, state, control, **kwargs):
        if self.output_dir is not None and self.history and state.is_world_process_zero:
            points = curve(self.history)
            write_curve(points, self.output_dir / "probing.json", title=self._title())

    # ------------------------------------------------------------------ scoring

    def score(self, model, tokenizer, step: int, *, run: str | None = None) -> dict[str, float]:
        """Score ``model`` (in memory) now; keep the result in ``history`` (and ``output_dir``); return
        the numbers to log. Usable from a training loop of one's own, without a Trainer."""
        from probing.analyses.probe.api import run_probe
        from probing.engine.passes import PassHooks
        from probing.model.loading import LoadedModel, scoring_mode

        if model is None:
            raise ProbingError("the Trainer passed no model to score", source="ProbingCallback")
        with scoring_mode(model):
            loaded = LoadedModel.from_live(model, tokenizer, name=run or self.name, step=step)
            # Single-process hooks: the pass must not join a torchrun group the training uses.
            result = run_probe(self.config, loaded=loaded, hooks=PassHooks(), description="probing")
        result["config"]["training_step"] = step
        self.history.append((step, result))
        if self.output_dir is not None:
            from probing.analyses.probe.curves import step_path
            from probing.results.io import write_result

            write_result(result, step_path(self.output_dir / "probing.json", step))
        return logged_numbers(points_of(step, result))

    def _tokenizer_of(self, processing_class):
        tokenizer = self.tokenizer or getattr(processing_class, "tokenizer", processing_class)
        if tokenizer is None:
            raise ProbingError("the Trainer has no processing_class (tokenizer); give ProbingCallback(tokenizer=...)",
                               source="ProbingCallback")
        return tokenizer

    def _title(self) -> str:
        from probing.analyses.probe.curves import run_title

        step, result = self.history[-1]
        return run_title(result["model"]["name"], result)


def _run_name(args) -> str:
    """The run's name in results: the Trainer's run name, else its output folder's name."""
    return getattr(args, "run_name", None) or Path(getattr(args, "output_dir", None) or "training").name
