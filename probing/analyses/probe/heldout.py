"""The probe's held-out run: choose every head and offset on DEV, report them on TEST (docs/heldout.md).

The choosing and the reporting are the held-out rules of :mod:`probing.stats.heldout`; this module runs the
probe on both treebanks with one loaded model (or reads DEV's result file), which is what ``probing score``
and ``probing.score`` do with ``--select-on`` or a bare treebank name.
"""

from __future__ import annotations

from probing.analyses.probe.api import load_for, run_probe
from probing.data.inputs import open_input
from probing.errors import ProbingError
from probing.stats.heldout import attach_heldout, is_result_file, plan, read_dev_result


def score_heldout(config, select_on: str, *, progress: bool = False) -> dict:
    """Score DEV (or read its result) and TEST with one loaded model; return TEST + ``heldout``.

    ``config`` is the TEST run's ScoreConfig; DEV is scored with the same
    options, without bootstrap and unsharded (every TEST shard must make the
    same choice).
    """
    config = config.validated()
    dev, dev_path = None, None
    if is_result_file(select_on):
        dev, dev_path = read_dev_result(select_on), select_on
        _check_config_against(dev, config, source=f"--select-on {select_on}")
    # Both treebanks are read through while the model loads: a bad line in either costs no model time.
    dev_source = None if dev is not None else open_input(select_on, limit=config.limit)
    test_source = open_input(config.treebank, limit=config.limit)
    loaded = load_for(config, validate=[source for source in (dev_source, test_source) if source], progress=progress)
    if dev is None:
        dev_config = config.replace(treebank=select_on, bootstrap=0, shard=None)
        dev = run_probe(dev_config, progress=progress, loaded=loaded, description="selecting on DEV", source=dev_source)
    test = run_probe(config, progress=progress, loaded=loaded, source=test_source)
    result = attach_heldout(test, dev, dev_result_path=dev_path)
    result["heldout"]["select_on"]["spec"] = select_on
    return result


def _check_config_against(dev: dict, config, source: str) -> None:
    """Early checks of a DEV result against the TEST options, before any model is loaded."""
    missing = [name for name in config.relations if name not in dev["relations"]]
    if missing:
        raise ProbingError(f"DEV result lacks relations {missing}; score DEV with them too", source=source)
    if list(dev["config"]["offsets"]) != list(config.offsets):
        raise ProbingError(f"DEV offsets {dev['config']['offsets']} differ from {list(config.offsets)}", source=source)
    if bool(dev["model"].get("random_init")) != bool(config.random_init):
        raise ProbingError("DEV and TEST differ in --random-init", source=source)
    if dev["config"].get("attention", "weights") != config.attention:
        raise ProbingError(f"DEV was read with --attention {dev['config'].get('attention')}, this run with "
                           f"{config.attention}", source=source)


def score_with_selection(config, select_on: str | None, *, progress: bool = False) -> dict:
    """What ``probing score`` runs: held-out when ``select_on`` is given or the treebank is a
    bare name with dev and test splits (select on dev, report on test), else in-sample."""
    treebank, select_on = plan(config.treebank, select_on)
    config = config.replace(treebank=treebank)
    if not select_on:
        return run_probe(config, progress=progress)
    return score_heldout(config, select_on, progress=progress)
