"""``probing score``: every head of a checkpoint on a treebank, per relation, vs. fixed offsets."""

from __future__ import annotations

import argparse
import sys

from probing.commands.common import add_options, run_analysis


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from probing.analyses.probe.options import OPTIONS

    parser.epilog = (
        "Without options it scores the packaged all-MiniLM-L6-v2 on the project's sample treebank, offline. "
        "--treebank en_ewt (a public treebank with dev and test splits) chooses heads on en_ewt:dev and reports "
        "them on en_ewt:test with 95% intervals; --treebank ko_pud (a treebank with one split, such as every PUD "
        "treebank) chooses on ko_pud:even and reports on ko_pud:odd (docs/languages.md). "
        "--model RUN_FOLDER, a folder of checkpoint-STEP/ subfolders "
        "(transformers Trainer's layout), scores each checkpoint in step order and draws the curve: with --output "
        "NAME.json, NAME-stepSTEP.json per checkpoint and NAME-curve.csv, .md and .png (docs/training.md); "
        "--random-init then adds the untrained control as step 0. Layers and heads in tables count from 1; the "
        "JSON counts from 0."
    )
    add_options(parser, OPTIONS)


def run(args: argparse.Namespace) -> int:
    """One checkpoint through the library function every engine command runs (probing.commands.common.run_analysis:
    outputs checked, processes and checkpoints set up, the result written); a folder of checkpoints scored step by
    step (:func:`run_training_folder`)."""
    from probing.analyses.probe.curves import find_checkpoints
    from probing.analyses.probe.heldout import probe
    from probing.analyses.probe.options import ProbeOptions

    checkpoints = find_checkpoints(args.model)
    if checkpoints is not None:
        return run_training_folder(args, checkpoints)
    return run_analysis(args, probe, ProbeOptions, analysis="probe", show=_show)


def _show(result: dict) -> None:
    """The tables on stdout, after a warning for every relation the treebank never has."""
    from probing.analyses.probe.tables import run_header, score_tables
    from probing.data.relations import warn_unmatched

    warn_unmatched({name: entry["total"] for name, entry in result["relations"].items()},
                   result["treebank"]["path"], command="score")
    print(run_header(result))
    print(score_tables(result))


def _input_paths(args: argparse.Namespace, config) -> list[str]:
    """Every file a training folder's run reads (the treebank or its two splits, DEV, the models' files): no output
    may be one."""
    from probing.commands.common import model_inputs
    from probing.data.inputs import InputSource, open_input
    from probing.stats.heldout import default_splits, is_result_file

    treebank = config.inputs.treebank
    splits = default_splits(treebank)
    inputs = [open_input(spec, limit=args.limit).path for spec in (splits or [treebank])]
    if args.select_on and not is_result_file(args.select_on):
        inputs.append(InputSource.treebank(args.select_on, option="--select-on").path)
    elif args.select_on:
        inputs.append(args.select_on)
    return inputs + model_inputs(args)


def run_training_folder(args: argparse.Namespace, checkpoints) -> int:
    """``--model RUN_FOLDER``: every checkpoint scored in step order, one result each, and the curve.

    Every output (a result per step, the curve's table and figure) is checked
    before the first model loads; each step's result is written as soon as it
    is scored, so an interrupted run keeps what it finished.
    """
    from probing.analyses.probe.config import ScoreConfig
    from probing.analyses.probe.curves import (
        curve,
        curve_table,
        earlier_output,
        planned_outputs,
        run_title,
        score_checkpoints,
        step_path,
        write_curve,
    )
    from probing.analyses.probe.options import ProbeOptions
    from probing.analyses.probe.tables import heldout_table, in_sample_title, run_header, score_table
    from probing.atomic import check_output_path, result_of
    from probing.commands.common import EngineCommand
    from probing.results.io import write_result

    config = ScoreConfig(*EngineCommand(args, start=False).specs(ProbeOptions)).validated()
    _refuse_for_a_training_folder(args, config, checkpoints)
    inputs = _input_paths(args, config)
    steps = ([0] if config.model.random_init else []) + [checkpoint.step for checkpoint in checkpoints]
    if args.output:  # --output names the results (each step's is beside it): it may be only a probe result itself
        check_output_path(args.output, inputs=inputs, follow_symlinks=args.follow_symlinks, replaces=result_of("probe"))
        for path in planned_outputs(args.output, steps):
            check_output_path(path, option="--output (beside it)", inputs=inputs, follow_symlinks=args.follow_symlinks,
                              replaces=earlier_output(path))

    def report(step: int, result: dict) -> None:
        print(f"step {step}: {run_header(result)}")
        print(heldout_table(result) if "heldout" in result else f"{in_sample_title(result)}\n{score_table(result)}")
        if args.output:
            written = write_result(result, step_path(args.output, step), follow_symlinks=args.follow_symlinks)
            print(f"wrote {written}", file=sys.stderr)

    results = score_checkpoints(config, checkpoints, control=config.model.random_init, after_each=report)
    points = curve(results)
    title = run_title(args.model, results[-1][1])
    print(f"\n{title}: accuracy % per step (head {points[0].selection}, layer-head from 1; best offset)")
    print(curve_table(points, intervals=False))
    if args.output:
        for path in write_curve(points, args.output, title=title, follow_symlinks=args.follow_symlinks):
            print(f"wrote {path}", file=sys.stderr)
    else:
        print("(pass --output FILE.json to keep each step's result and the curve)", file=sys.stderr)
    return 0


def _refuse_for_a_training_folder(args: argparse.Namespace, config, checkpoints) -> None:
    """What a folder of checkpoints cannot be scored with, each refused naming its option."""
    import os

    from probing.errors import ProbingError

    for given, option in ((args.shard, "--shard"), (args.checkpoint, "--checkpoint"), (args.resume, "--resume"),
                          (args.revision, "--revision")):
        if given:
            raise ProbingError(f"scores whole checkpoints of a training folder one after another; drop {option} "
                               "(or score one checkpoint folder at a time)", source=option)
    if int(os.environ.get("WORLD_SIZE", "1")) > 1:
        raise ProbingError("a folder of checkpoints is scored by one process; run it without torchrun",
                           source="--model")
    if args.select_on and args.select_on.lower().endswith(".json"):
        raise ProbingError("a DEV result belongs to one checkpoint; give the DEV treebank so that each checkpoint "
                           "chooses on it", source="--select-on")
    if config.model.random_init and checkpoints[0].step == 0:
        raise ProbingError("--random-init adds the untrained control as step 0, but the folder has a "
                           "checkpoint-0 already", source="--random-init")
