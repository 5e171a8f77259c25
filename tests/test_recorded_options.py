"""Results that say how they were made (issue 58): every option that can change a number, and DEV's content
fingerprint, is in the result's ``config.options`` and in its checkpoint's identity
(probing.commands.common.recorded_options), for every analysis with a checkpoint.

Each command is run once on the tiny BERT and the sample, and stopped right after its first checkpoint. Resuming
it after changing one number-changing option is refused in one line naming the option (``command.OPTION``);
resuming after changing one that changes no number goes on, and the result records the number-changing options
(not the other). A table gives every such option of every command a change: a new option without one fails
:func:`test_every_option_of_every_checkpointed_command_is_classified_and_changed_here`.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from coref_data import coref_treebank_path

from probing.cli import command_parser, commands, main
from probing.engine.arguments import NO_NUMBER_OPTIONS, RECORDED_ELSEWHERE, recorded_options
from probing.engine.checkpointing import Checkpointer
from probing.testing import sample_split, tiny_bert


class Crash(KeyboardInterrupt):
    """Stands in for a kill right after the first checkpoint was written (an interrupt: the command stops as at
    Ctrl-C, leaving the checkpoint as it is)."""


def _base(command: str, dev: str, test: str) -> list[str]:
    """A short run of ``command`` (``--limit 20 --batch-size 1``: two chunks of 16 units, so the first is saved)."""
    common = ["--model", tiny_bert(), "--limit", "20", "--batch-size", "1", "--checkpoint-every", "0", "--quiet"]
    specific = {
        "score": ["--treebank", test, "--relations", "det", "--bootstrap", "10"],
        "surface": ["--treebank", test],
        "heads": ["--treebank", test],
        "gradients": ["--treebank", test],
        "patterns": ["--treebank", test],
        "compare": ["--treebank", test, "--second-model", tiny_bert(seed=1)],
        "coref": ["--treebank", str(coref_treebank_path("test")), "--window", "48", "--bootstrap", "10"],
        "trees": ["--treebank", test, "--select-on", dev, "--no-probes", "--relations", "det", "--bootstrap", "10"],
        "ablate": ["--treebank", test, "--metric", "mlm", "--chosen", "det", "--k", "1", "--random", "2",
                   "--match", "layer", "--select-on", dev, "--bootstrap", "10"],
    }[command]
    return [command, *common, *specific]


CHANGES: dict[str, list[str]] = {
    # an option's name in args: the options that change it (replacing the base's value when the base gives one)
    "dtype": ["--dtype", "bfloat16"],
    "trust_remote_code": ["--trust-remote-code"],
    "stack": ["--stack", "decoder"],
    "random_init": ["--random-init"],
    "seed": ["--seed", "3"],
    "pairs": ["--pairs"],
    "limit": ["--limit", "18"],
    "max_length": ["--max-length", "40"],
    "attention": ["--attention", "norms"],
    "pool_from": ["--pool-from", "first"],
    "bootstrap": ["--bootstrap", "12"],
    "relations": ["--relations", "nsubj"],
    "select_on": ["--select-on", "DEV-CHANGED"],  # DEV's bytes changed at the same path
    "select_limit": ["--select-limit", "3"],
    "mask_rate": ["--mask-rate", "0.2"],
    "window": ["--window", "40"],
    "ensemble_size": ["--ensemble-size", "3"],
    "candidates": ["--candidates", "20"],
    "no_probes": ["--no-probes"],
    "probe_epochs": ["--probe-epochs", "2"],
    "word_vectors": ["--word-vectors", "vectors.txt"],
    "probe": ["--probe", "probe.json"],
    "maps": ["--maps", "2"],
    "hand_labels": ["--hand-labels", "labels.csv"],
    "label_model": ["--label-model", "m"],
    "second_model": ["--second-model", "other-model"],
    "second_random_init": ["--second-random-init"],
    "heads": ["--heads", "1-1"],
    "each_head": ["--each-head"],
    "each_layer": ["--each-layer"],
    "chosen": ["--chosen", "nsubj"],
    "k": ["--k", "2"],
    "random": ["--random", "3"],
    "match": ["--match", "band"],
    "metric": ["--metric", "lm"],
    "paradigms": ["--paradigms", "anaphor_gender_agreement"],
    "phenomena": ["--phenomena", "anaphor_agreement"],
    "pair_set": ["--pair-set", "clams-de"],
    "lexicon": ["--lexicon", "de_gsd:dev"],
    "pairs_file": ["--pairs-file", "mine.jsonl"],
    # options that change no number
    "output": ["--output", "elsewhere.json"],
    "checkpoint": ["--checkpoint", "elsewhere.checkpoint"],
    "checkpoint_every": ["--checkpoint-every", "600"],
    "resume": ["--resume"],
    "progress": ["--progress"],
    "quiet": ["--quiet"],
    "follow_symlinks": ["--follow-symlinks"],
    "workers": ["--workers", "1"],
    "figure_format": ["--figure-format", "svg"],
    "top": ["--top", "3"],
    "scores_only": ["--scores-only"],
    "drop_probe_weights": ["--drop-probe-weights"],
    "save_results": ["--save-results", "folder"],
}

CHECKPOINTED = ("score", "surface", "heads", "gradients", "patterns", "compare", "coref", "trees", "ablate")
"""The analyses whose runs keep a checkpoint and write one result (report and explore write pages of several)."""


def _changed(argv: list[str], change: list[str]) -> list[str]:
    """``argv`` with the option of ``change`` given its value (the old value replaced, or the option added; a
    flag already given is taken away)."""
    argv = list(argv)
    flag = change[0]
    if flag not in argv:
        return argv + change
    start = argv.index(flag)
    end = start + 1
    while end < len(argv) and not argv[end].startswith("--"):
        end += 1
    argv[start:end] = [] if change == [flag] else change
    return argv


EXCLUSIVE = {"heads", "each_head", "each_layer"}
"""ablate's conditions other than --chosen: given instead of it (its --k, --random and --select-on go too)."""


def _without_chosen(argv: list[str]) -> list[str]:
    for flag in ("--chosen", "--k", "--random", "--select-on"):
        argv = _changed(argv, [flag])
    return argv


def _parsed(argv: list[str]):
    return vars(command_parser(argv[0]).parse_args(argv[1:]))


def test_every_option_of_every_checkpointed_command_is_classified_and_changed_here(splits):
    """Every option of every command with --resume is recorded, or said to change no number, or recorded by what
    it reads; and changing a recorded one changes the record in that option alone."""
    assert {name for name in commands() if "resume" in _dests(name)} >= set(CHECKPOINTED)
    for command in CHECKPOINTED:
        base = _base(command, *splits)
        before = recorded_options(_parsed(base))
        for dest in _dests(command) - RECORDED_ELSEWHERE:
            assert dest in CHANGES, f"{command}: give --{dest} a change in CHANGES and say whether it changes a number"
            if dest in NO_NUMBER_OPTIONS:
                assert dest not in before
                continue
            after = recorded_options(_parsed(_changed(_without_chosen(base) if dest in EXCLUSIVE else base,
                                                      CHANGES[dest])))
            differing = {key for key in before.keys() | after.keys() if before.get(key) != after.get(key)}
            assert dest in differing and (dest in EXCLUSIVE or differing == {dest}), (command, dest, differing)


def _dests(command: str) -> set[str]:
    return {action.dest for action in command_parser(command)._actions if action.dest != "help"}


@pytest.fixture(scope="module")
def splits(tmp_path_factory) -> tuple[str, str]:
    """DEV (the sample's first 40 sentences) and TEST (the rest), in a folder of this module."""
    return sample_split(40, None, tmp_path_factory.mktemp("split"))


@pytest.fixture(scope="module")
def crashed(tmp_path_factory, splits):
    """Per command, a folder holding its checkpoint as a kill right after the first save leaves it."""
    made = {}

    def crash(command: str) -> Path:
        if command not in made:
            folder = tmp_path_factory.mktemp(command)
            original = Checkpointer._save

            def save_then_crash(self, *args, **kwargs):
                original(self, *args, **kwargs)
                raise Crash

            with pytest.MonkeyPatch.context() as patch:
                patch.setattr(Checkpointer, "_save", save_then_crash)
                assert main([*_base(command, *splits), "--output", str(folder / "out.json")]) == 130
            assert (folder / "out.json.checkpoint").is_file()
            made[command] = folder
        return made[command]

    return crash


NUMBER_CASES = [
    ("score", "relations"), ("score", "seed"), ("score", "pool_from"), ("score", "limit"),
    ("surface", "attention"), ("surface", "max_length"), ("surface", "random_init"),
    ("heads", "seed"), ("gradients", "mask_rate"), ("patterns", "maps"), ("compare", "second_random_init"),
    ("coref", "window"), ("coref", "bootstrap"),
    ("trees", "ensemble_size"), ("trees", "candidates"), ("trees", "select_on"),
    ("ablate", "chosen"), ("ablate", "k"), ("ablate", "random"), ("ablate", "match"), ("ablate", "select_on"),
    ("ablate", "seed"),
    ("ablate", "bootstrap"), ("ablate", "limit"), ("ablate", "dtype"), ("ablate", "select_limit"),
]
NO_NUMBER_CASES = [("score", "workers"), ("surface", "checkpoint_every"), ("coref", "progress"),
                   ("trees", "figure_format"), ("ablate", "top"), ("ablate", "scores_only")]


def _resume(command: str, folder: Path, splits, dest: str, capsys) -> tuple[int, str, Path]:
    work = folder / f"resume-{dest}"
    if work.exists():
        shutil.rmtree(work)
    work.mkdir()
    shutil.copy(folder / "out.json.checkpoint", work / "out.json.checkpoint")
    dev, test = splits
    argv = [*_base(command, dev, test), "--output", str(work / "out.json"), "--resume"]
    capsys.readouterr()  # what the interrupted run said
    if dest != "select_on":
        code = main(_changed(argv, CHANGES[dest]))
        return code, capsys.readouterr().err, work
    original = Path(dev).read_bytes()  # DEV's bytes changed at the path the checkpoint's run read
    Path(dev).write_bytes(original.replace(b"\tdog\t", b"\tDog\t", 1))
    try:
        code = main(argv)
    finally:
        Path(dev).write_bytes(original)
    return code, capsys.readouterr().err, work


@pytest.mark.parametrize("command, dest", NUMBER_CASES)
def test_resuming_with_a_number_changing_option_changed_is_refused_naming_it(command, dest, crashed, splits, capsys):
    code, err, work = _resume(command, crashed(command), splits, dest, capsys)
    assert code == 2, err
    named = f"command.{dest}.sha256 is" if dest == "select_on" else f"command.{dest} is"  # DEV: its bytes
    assert err.count("\n") == 1 and "another run" in err and named in err, err
    assert (work / "out.json.checkpoint").is_file() and not (work / "out.json").exists()


@pytest.mark.parametrize("command, dest", NO_NUMBER_CASES)
def test_resuming_with_an_option_that_changes_no_number_goes_on(command, dest, crashed, splits, capsys):
    code, err, work = _resume(command, crashed(command), splits, dest, capsys)
    assert code == 0, err
    result = json.loads((work / "out.json").read_text())
    options = result["config"]["options"]
    assert dest not in options and options == recorded_options(_parsed(_base(command, *splits)))
    if command in ("trees", "ablate"):  # DEV by its spec and its bytes
        assert options["select_on"] == {"spec": splits[0], "sha256": result_sha(splits[0])}
    if command == "ablate":
        assert (options["chosen"], options["k"], options["random"], options["match"]) == (["det"], [1], 2, "layer")


def result_sha(path: str) -> str:
    import hashlib

    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


@pytest.mark.slow
def test_parts_whose_dev_changed_at_the_same_path_are_not_merged(splits, tmp_path, capsys):
    """Two shards of one ``ablate --chosen`` command, DEV's bytes changed between them at the same path: each part
    records DEV's sha256 (``config.options.select_on``), so merging them is refused, naming it."""
    dev, test = splits
    original = Path(dev).read_bytes()
    parts = []
    try:
        for index in range(2):
            if index:
                Path(dev).write_bytes(original.replace(b"\tdog\t", b"\tDog\t", 1))
            parts.append(tmp_path / f"part{index}.json")
            argv = _changed(_base("ablate", dev, test), ["--limit", "6"])
            assert main([*argv, "--shard", f"{index}/2", "--output", str(parts[-1])]) == 0
    finally:
        Path(dev).write_bytes(original)
    capsys.readouterr()
    records = [json.loads(part.read_text())["config"]["options"]["select_on"] for part in parts]
    assert records[0]["spec"] == records[1]["spec"] == dev and records[0]["sha256"] != records[1]["sha256"]
    assert main(["merge", *map(str, parts), "--output", str(tmp_path / "merged.json")]) == 2
    err = capsys.readouterr().err
    assert "select_on" in err and not (tmp_path / "merged.json").exists(), err
