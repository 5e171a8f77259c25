"""Held out by content, not by name (issue 58): every command that chooses on DEV and reports on other units
(score, trees, coref, ablate --chosen) compares DEV's sentences with those it reports on, by their words
(probing.stats.heldout.check_disjoint), before the model loads.

A copy of TEST with one comment line added has other bytes but the same sentences; a DEV holding 5 of the 20
sentences measured shares a quarter of their words. Both are refused: exit 2, one line naming --select-on, how many
sentences are shared and one of them, nothing written. The model given is a folder that does not exist, so a
refusal proves the check comes before the model: were it later, the missing model would be reported instead. A
disjoint DEV passes the check and reaches that model error, and one real run on it still works.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from probing.cli import main
from probing.testing import sample_path, tiny_bert

NO_MODEL = "./no-such-model"
TEST_SENTENCES = 20
SHARED = 5


def _blocks(path: Path) -> list[str]:
    return [block for block in path.read_text(encoding="utf-8").split("\n\n") if block.strip()]


def _write(path: Path, blocks: list[str]) -> str:
    path.write_text("\n\n".join(blocks) + "\n\n", encoding="utf-8")
    return str(path)


@pytest.fixture(scope="module")
def splits(tmp_path_factory) -> dict[str, str]:
    """The sample cut in DEV (its first 40 sentences) and TEST (the next 20), and hostile DEVs: ``copy``, TEST
    with a comment line added (other bytes, the same sentences); ``partial``, DEV with 5 of TEST's sentences."""
    folder = tmp_path_factory.mktemp("splits")
    blocks = _blocks(sample_path())
    dev, test = blocks[:40], blocks[40:40 + TEST_SENTENCES]
    return {
        "dev": _write(folder / "dev.conllu", dev),
        "test": _write(folder / "test.conllu", test),
        "copy": _write(folder / "copy.conllu", ["# a comment line added\n" + test[0], *test[1:]]),
        "partial": _write(folder / "partial.conllu", dev[:30] + test[3:3 + SHARED]),
    }


def _argv(command: str, dev: str, test: str, output: Path, model: str = NO_MODEL) -> list[str]:
    common = ["--quiet", "--model", model, "--treebank", test, "--select-on", dev, "--output", str(output)]
    if command == "ablate":
        return ["ablate", *common, "--metric", "mlm", "--chosen", "det", "--random", "2", "--bootstrap", "10"]
    if command == "trees":
        return ["trees", *common, "--no-probes", "--bootstrap", "10"]
    return [command, *common, "--bootstrap", "10"]


COMMANDS = ("score", "trees", "coref", "ablate")


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("hostile, shared", [("copy", TEST_SENTENCES), ("partial", SHARED)])
def test_a_dev_sharing_sentences_is_refused_before_the_model(command, hostile, shared, splits, tmp_path, capsys):
    output = tmp_path / "out.json"
    code = main(_argv(command, splits[hostile], splits["test"], output))
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.count("\n") == 1 and err.endswith("\n"), err
    assert f"--select-on {splits[hostile]}" in err and "in-sample selection" in err
    assert f"{shared} of those" in err  # how many of the sentences reported on DEV holds
    quoted = err.split('such as "', 1)[1].split('"', 1)[0]
    test_keys = [" ".join(line.split("\t")[1] for line in block.splitlines() if line[:1].isdigit()).casefold()
                 for block in _blocks(Path(splits["test"]))]
    assert quoted in test_keys  # one of them, quoted
    assert NO_MODEL not in err  # refused before the model was looked for
    assert not output.exists() and not output.with_name(output.name + ".checkpoint").exists()


@pytest.mark.parametrize("command", COMMANDS)
def test_a_disjoint_dev_passes_the_check(command, splits, tmp_path, capsys):
    code = main(_argv(command, splits["dev"], splits["test"], tmp_path / "out.json"))
    err = capsys.readouterr().err
    assert code == 2 and "no-such-model" in err and "in-sample" not in err, err  # on to the model: DEV was let through


def test_a_dev_result_made_of_a_copy_of_test_is_refused(splits, tmp_path, capsys):
    """A DEV result file is compared by the sentences of the treebank it was made of, read again."""
    dev_result = tmp_path / "dev.json"
    assert main(["score", "--quiet", "--model", tiny_bert(), "--treebank", splits["copy"], "--limit", "6",
                 "--bootstrap", "0", "--output", str(dev_result)]) == 0
    capsys.readouterr()
    output = tmp_path / "out.json"
    assert main(_argv("score", str(dev_result), splits["test"], output, model=tiny_bert())) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "6 of its 6 sentences" in err and "in-sample selection" in err, err
    assert not output.exists()

    moved = Path(splits["copy"]).with_name("moved.conllu")  # the treebank the result names is gone
    Path(splits["copy"]).rename(moved)
    try:
        assert main(_argv("score", str(dev_result), splits["test"], output, model=tiny_bert())) == 2
    finally:
        moved.rename(splits["copy"])
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot compare DEV's sentences" in err and "cannot be read here" in err, err
    assert not output.exists()


def test_a_disjoint_dev_still_works(splits, tmp_path, capsys):
    output = tmp_path / "out.json"
    assert main(_argv("score", splits["dev"], splits["test"], output, model=tiny_bert())) == 0
    capsys.readouterr()
    assert json.loads(output.read_text())["heldout"]["select_on"]["spec"] == splits["dev"]


def test_a_treebanks_own_splits_may_share_a_few_short_sentences(tmp_path):
    """A treebank's dev and test share some greetings and signatures by nature (en_ewt: 27 sentences): a few
    short shared sentences under the allowance are let through, as the real splits must be."""
    from probing.data.inputs import InputSource
    from probing.stats.heldout import check_disjoint

    blocks = _blocks(sample_path())
    greeting = "# sent_id = hi\n1\tThanks\tthanks\tINTJ\t_\t_\t0\troot\t_\t_\n2\t.\t.\tPUNCT\t_\t_\t1\tpunct\t_\t_"
    dev = _write(tmp_path / "dev.conllu", blocks[:40] + [greeting])
    test = _write(tmp_path / "test.conllu", blocks[40:] + [greeting.replace("= hi", "= hi-2")])
    check_disjoint(InputSource.treebank(dev), InputSource.treebank(test))
