"""Every command the README shows is run here: the offline ones for real, the hub ones up to their clear error.

Each ``probing ...`` line of the README's bash blocks must be listed in HOW below (a new command in the README
without a way to test it fails test_every_readme_command_is_tested), and the error examples of the README's
Errors section must be what the tool prints. The Python examples of the README and of docs/api.md run as
doctests, in the repository's folder.
"""

from __future__ import annotations

import doctest
import json
import os
import re
import shlex
import subprocess
import sys

import pytest
from conftest import REPO, conllu_rows, real_treebank

README = (REPO / "README.md").read_text(encoding="utf-8")

HOW = {
    "probing score": "offline",
    "probing data fetch en_ewt": "real",
    "probing score --treebank en_ewt --output minilm-ewt.json": "real",
    "probing score --model bert-base-cased --treebank en_ewt --output bert-ewt.json": "hub",
    "probing leaderboard minilm-ewt.json --format md": "real",
    "probing plot minilm-ewt.json --output minilm-ewt.png": "real",
}
"""README command -> offline (runs anywhere), real (needs a real treebank; run in order), hub (needs the network:
run offline, it must stop at once with one line naming --model)."""


def readme_commands() -> list[str]:
    blocks = re.findall(r"```bash\n(.*?)```", README, flags=re.DOTALL)
    commands = []
    for block in blocks:
        for line in block.splitlines():
            line = line.split("  #")[0].strip()
            if line.startswith("probing "):
                commands.append(line)
    return commands


def run(command: str, cwd, env=None) -> subprocess.CompletedProcess:
    argv = [sys.executable, "-m", "probing", *shlex.split(command)[1:]]
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, env={**os.environ, **(env or {})},
                          timeout=900)


def test_every_readme_command_is_tested():
    assert sorted(readme_commands()) == sorted(HOW)


@pytest.mark.slow
def test_the_offline_commands_run(tmp_path):
    for command in (c for c, how in HOW.items() if how == "offline"):
        finished = run(command, tmp_path)
        assert finished.returncode == 0, finished.stderr[-2000:]
        assert "best head (layer-head, from 1)" in finished.stdout
        # the offline default is in-sample and says so; the model has its short name, not where it is installed
        first, second = finished.stdout.splitlines()[:2]
        assert first.startswith("all-MiniLM-L6-v2 (BertModel, 6x12) on the sample treebank (sample.conllu)")
        assert second.startswith("in-sample: heads and offsets chosen and reported on the same 75 sentences")


@pytest.mark.slow
def test_the_hub_commands_stop_at_once_without_a_network(tmp_path):
    import os

    for command in (c for c, how in HOW.items() if how == "hub"):
        finished = run(command, tmp_path, env={"HF_HUB_OFFLINE": "1"})  # never download, even where there is a network
        assert finished.returncode == 2
        # a treebank download that was tried first says so on its own line; then one line of error
        errors = [line for line in finished.stderr.splitlines() if not line.startswith("probing: downloading ")]
        assert len(errors) == 1 and "Traceback" not in finished.stderr, finished.stderr
        if os.environ.get("PROBING_TREEBANKS"):  # else the treebank, checked before the model, is what is missing
            assert "--model" in finished.stderr


@pytest.mark.real_data
@pytest.mark.slow
def test_the_real_treebank_commands_run_in_order(tmp_path):
    real_treebank("en_ewt", "dev"), real_treebank("en_ewt", "test")
    env = {"PROBING_CACHE": str(tmp_path / "cache")}
    for command in (c for c, how in HOW.items() if how == "real"):
        finished = run(command, tmp_path, env=env)
        assert finished.returncode == 0, (command, finished.stderr[-2000:])
    assert (tmp_path / "minilm-ewt.json").is_file() and (tmp_path / "minilm-ewt.png").is_file()


@pytest.mark.slow
def test_the_error_examples_are_what_the_tool_prints(tmp_path):
    examples = re.findall(r"^\$ (probing .*)\n(probing .*)$", README, flags=re.MULTILINE)
    assert len(examples) == 2
    rows = [f"{n} w{n} w X _ _ {0 if n == 1 else 1} {'root' if n == 1 else 'dep'} _ _" for n in range(1, 14)]
    (tmp_path / "broken.conllu").write_text(conllu_rows(*rows, "14 w14 w X _ _ x dep _ _"), encoding="utf-8")
    for command, printed in examples:
        finished = run(command, tmp_path)
        assert finished.returncode == 2 and finished.stderr.strip() == printed


def python_examples(text: str) -> str:
    """The ``python`` blocks of a Markdown text, one after another."""
    return "\n".join(re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL))


def run_examples(name: str, text: str, monkeypatch) -> None:
    monkeypatch.chdir(REPO)  # the examples name committed files by their paths in the repository
    examples = doctest.DocTestParser().get_doctest(python_examples(text), {}, name, name, 0)
    assert len(examples.examples) >= 5, f"{name} shows no Python examples"
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    report = []
    runner.run(examples, out=report.append)
    assert runner.failures == 0, "".join(report)


def test_the_readme_python_examples_run(monkeypatch):
    section = README.split("## Python API", 1)[1].split("\n## ", 1)[0]
    assert "to_frame()" in section and "accuracy(" in section  # a DataFrame of per-head accuracy
    run_examples("README.md", README, monkeypatch)


def test_the_api_page_examples_run(monkeypatch):
    run_examples("docs/api.md", (REPO / "docs" / "api.md").read_text(encoding="utf-8"), monkeypatch)


def _named_commands(phrase: str) -> set[str]:
    """The command names of a README phrase such as ``surface, heads and report``."""
    return {name for name in re.split(r",\s*|\s+and\s+", phrase.strip()) if name}


def test_the_readme_says_which_commands_take_text_and_pairs():
    from probing.cli import command_parser, commands

    sentence = " ".join(re.search(r"the input\s*\((.*?)\), batching", README, re.DOTALL).group(1).split())
    both = _named_commands(re.search(r"and `--pairs`, in (.*?);", sentence).group(1))
    text_only = _named_commands(re.search(r"`--text` without `--pairs` in (.*?);", sentence).group(1))
    neither = _named_commands(re.search(r"not in (.*?), which", sentence).group(1))
    taken = {name: {"--text", "--pairs"} & set(command_parser(name)._option_string_actions) for name in commands()}
    assert both == {name for name, options in taken.items() if options == {"--text", "--pairs"}}
    assert text_only == {name for name, options in taken.items() if options == {"--text"}}
    with_treebank = {name for name in commands() if "--treebank" in command_parser(name)._option_string_actions}
    assert neither == {name for name in with_treebank if not taken[name]}


def test_the_readme_gives_the_replicates_of_the_committed_boards():
    stated = int(re.search(r"results were made with `--bootstrap (\d+) --seed 0`", README).group(1))
    counts = {}
    for path in (REPO / "leaderboards").glob("en_*/results/*.json"):
        result = json.loads(path.read_text(encoding="utf-8"))
        if result["analysis"] in ("probe", "coref"):
            recorded = result["config"]["bootstrap"]  # the probe's {"replicates": N, ...}, coref's N
            counts[path.name] = recorded["replicates"] if isinstance(recorded, dict) else recorded
    assert counts and set(counts.values()) == {stated}


def test_the_speed_guard_paragraph_quotes_the_guard_and_its_measurements():
    """The README's speed-guard sentence: its bound and input are the guard's own constants, and the two ratios it
    quotes are those the guard printed in benchmarks/RESULTS.md's section on it."""
    from benchmarks import guard
    from probing.data.inputs import sample_treebank_path
    from probing.data.treebank import read_treebank

    paragraph = README[README.index("speed\nguard"):].split("\n\n")[0].replace("\n", " ")
    sentences = sum(1 for _ in read_treebank(sample_treebank_path())) * guard.COPIES
    assert f"{sentences:,} sentences" in paragraph and f"{guard.COPIES} times over" in paragraph
    assert f"more than {guard.BOUND:g} times" in paragraph
    section = (REPO / "benchmarks" / "RESULTS.md").read_text(encoding="utf-8").split("## The speed guard")[1]
    section = section.split("\n## ")[0]
    quoted = re.findall(r"gives (\d\.\d\d) there and fails; the shipped code gives about (\d\.\d\d)", paragraph)
    assert quoted, "the paragraph no longer quotes the two ratios"
    failing, passing = quoted[0]
    assert f"= {failing} (median of paired repeats), at most {guard.BOUND:g}: FAILED" in section
    assert f"= {passing} (median of paired repeats), at most {guard.BOUND:g}: passed" in section
