"""Pair sets by name (docs/minimal-pairs.md): CLAMS and RuBLiMP read from a folder of pair sets (pinned here by the
test's own files' sha256, as BLiMP's tests pin theirs), fetched from a local server in place of their public homes,
counted and written out by ``probing data pairs`` (no model), read back by ``--pairs-file``; every hostile file
refused in one line naming file:line, exit 2, with nothing written and every input as it was."""

from __future__ import annotations

import functools
import hashlib
import http.server
import threading
from pathlib import Path

import pytest
from conftest import real_minimal_pairs
from helpers import registrar

from probing.cli import main
from probing.data.minimal_pairs import read_pair_file
from probing.data.pair_sets import clams, rublimp
from probing.data.pair_sets.catalogue import PAIR_SETS, Sources, pair_set
from probing.errors import ProbingError

CLAMS_LINES = ["True\tdie Autoren sind alt", "False\tdie Autoren ist alt",
               "True\tder Autor ist jung", "False\tder Autor sind jung"]
RUBLIMP_HEADER = "id,source_sentence,target_sentence,source_word,target_word,level,phenomenon,PID"
RUBLIMP_ROWS = ['1,Кот спит.,Коты спит.,Кот,Коты,Syntax,Subject-Predicate Agreement,noun_subj_predicate_agreement_number',
                '2,"Кошки, конечно, спят.","Кошки, конечно, спит.",спят,спит,Syntax,Subject-Predicate Agreement,'
                'noun_subj_predicate_agreement_number']


def pinned(monkeypatch, files, name: str, path: Path) -> None:
    """Pin ``path``'s bytes as the file ``name`` of ``files``, as the real file is pinned."""
    monkeypatch.setitem(files.pins, name, hashlib.sha256(path.read_bytes()).hexdigest())


@pytest.fixture
def root(tmp_path, monkeypatch) -> Path:
    """A folder of pair sets: clams/de/simple_agrmt.txt and rublimp/noun_subj_predicate_agreement_number.csv, each
    pinned; the environment's folders and cache out of the way."""
    for variable in ("PROBING_MINIMAL_PAIRS", "PROBING_BLIMP"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("PROBING_CACHE", str(tmp_path / "cache"))
    folder = tmp_path / "minimal-pairs"
    (folder / "clams" / "de").mkdir(parents=True)
    (folder / "rublimp").mkdir()
    write_clams(folder, "\n".join(CLAMS_LINES) + "\n", monkeypatch)
    write_rublimp(folder, "\n".join([RUBLIMP_HEADER, *RUBLIMP_ROWS]) + "\n", monkeypatch)
    return folder


def write_clams(folder: Path, text: str | bytes, monkeypatch) -> Path:
    path = folder / "clams" / "de" / "simple_agrmt.txt"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    pinned(monkeypatch, clams.FILES, "de/simple_agrmt.txt", path)
    return path


def write_rublimp(folder: Path, text: str | bytes, monkeypatch) -> Path:
    path = folder / "rublimp" / "noun_subj_predicate_agreement_number.csv"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    pinned(monkeypatch, rublimp.FILES, "noun_subj_predicate_agreement_number.csv", path)
    return path


def test_the_registry_names_every_set_and_a_treebank_kind():
    assert PAIR_SETS.names() == ["blimp", "clams-de", "clams-fr", "clams-ru", "rublimp", "TREEBANK:agreement"]
    assert pair_set("fi_tdt:dev:agreement").treebank == "fi_tdt:dev"
    assert pair_set("data/my treebank.conllu:agreement").treebank == "data/my treebank.conllu"
    assert len(pair_set("clams-fr").paradigms) == 7 and len(pair_set("rublimp").paradigms) == 19
    for name in ("agreement", ":agreement", "clams"):
        with pytest.raises(ProbingError, match="--pair-set: unknown pair set"):
            pair_set(name)


def test_a_named_set_reads_its_pinned_files_and_chooses_by_paradigm_and_phenomenon(root):
    pairs, described = pair_set("clams-de").read(Sources(str(root)), paradigms=["simple_agrmt"])
    assert [(pair.good, pair.bad, pair.uid, pair.term, pair.pair_id) for pair in pairs] == [
        ("die Autoren sind alt", "die Autoren ist alt", "simple_agrmt", "simple_agrmt", "1"),
        ("der Autor ist jung", "der Autor sind jung", "simple_agrmt", "simple_agrmt", "3")]
    assert described["pair_set"] == "clams-de" and described["commit"] == clams.COMMIT
    pairs, _ = pair_set("rublimp").read(Sources(str(root)), ["noun_subj_predicate_agreement_number"],
                                        ["Subject-Predicate Agreement"], limit=1)
    assert [(pair.good, pair.field) for pair in pairs] == [("Кот спит.", "syntax")]
    with pytest.raises(ProbingError, match=r"--paradigms: unknown CLAMS German paradigm 'simple' \(did you mean "
                                           r"simple_agrmt\?\)"):
        pair_set("clams-de").read(Sources(str(root)), paradigms=["simple"])


def test_a_file_that_is_not_the_pinned_one_is_refused(root, monkeypatch):
    monkeypatch.setitem(clams.FILES.pins, "de/simple_agrmt.txt", "0" * 64)
    with pytest.raises(ProbingError, match="sha256 mismatch for de/simple_agrmt.txt"):
        pair_set("clams-de").read(Sources(str(root)), paradigms=["simple_agrmt"])


def test_the_environment_names_the_folder_and_blimp_keeps_its_own(root, monkeypatch):
    monkeypatch.setenv("PROBING_MINIMAL_PAIRS", str(root))
    assert len(pair_set("clams-de").read(Sources(), paradigms=["simple_agrmt"])[0]) == 2
    from probing.data.minimal_pairs import blimp_source

    assert blimp_source(None, None) == (root / "blimp", "PROBING_MINIMAL_PAIRS")
    monkeypatch.setenv("PROBING_BLIMP", "elsewhere")
    assert blimp_source(None, None)[1] == "PROBING_BLIMP" and blimp_source("given", None)[1] == "--blimp"
    assert blimp_source(None, str(root))[0] == root / "blimp"  # an option before any variable


def test_without_a_folder_a_set_is_fetched_once_into_the_cache_checked_by_sha256(tmp_path, monkeypatch):
    """A local server in place of CLAMS's public home: the right file is cached and read again offline; a wrong one
    is never cached."""
    served = tmp_path / "served" / "aaronmueller" / "clams" / clams.COMMIT / "de_evalset"
    served.mkdir(parents=True)
    good = served / "simple_agrmt.txt"
    good.write_text("\n".join(CLAMS_LINES) + "\n", encoding="utf-8")
    pinned(monkeypatch, clams.FILES, "de/simple_agrmt.txt", good)
    (served / "vp_coord.txt").write_text("True\ta\nFalse\tb\n", encoding="utf-8")  # not the pinned file
    for variable in ("PROBING_MINIMAL_PAIRS", "PROBING_BLIMP"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("PROBING_CACHE", str(tmp_path / "cache"))
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path / "served"))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        monkeypatch.setenv("PROBING_MINIMAL_PAIRS_BASE_URL", f"http://127.0.0.1:{server.server_port}")
        assert len(pair_set("clams-de").read(Sources(), paradigms=["simple_agrmt"])[0]) == 2
        with pytest.raises(ProbingError, match="sha256 mismatch"):
            pair_set("clams-de").read(Sources(), paradigms=["vp_coord"])
    finally:
        server.shutdown()
    monkeypatch.setenv("PROBING_MINIMAL_PAIRS_BASE_URL", "http://127.0.0.1:9")  # nothing answers: the cache serves
    assert len(pair_set("clams-de").read(Sources(), paradigms=["simple_agrmt"])[0]) == 2
    assert not any(path.name == "vp_coord.txt" for path in (tmp_path / "cache").rglob("*"))
    with pytest.raises(ProbingError, match="download failed.*--minimal-pairs DIR or set PROBING_MINIMAL_PAIRS"):
        pair_set("clams-de").read(Sources(), paradigms=["prep_anim"])


def test_data_pairs_writes_a_set_out_and_pairs_file_reads_it_back_as_it_was(root, tmp_path, capsys):
    output = tmp_path / "clams.jsonl"
    assert main(["data", "pairs", "clams-de", "--paradigms", "simple_agrmt", "--minimal-pairs", str(root),
                 "--output", str(output)]) == 0
    assert "clams-de" in capsys.readouterr().out
    written, _ = read_pair_file(str(output))
    read, _ = pair_set("clams-de").read(Sources(str(root)), paradigms=["simple_agrmt"])
    assert written == read


def test_agreement_pairs_written_out_read_back_with_their_record(tmp_path, capsys):
    from test_agreement_pairs import SENTENCES, conllu

    treebank = tmp_path / "hand.conllu"
    treebank.write_text("".join(conllu(sent_id, *rows) for sent_id, rows in SENTENCES.items()), encoding="utf-8")
    output = tmp_path / "agreement.jsonl"
    assert main(["data", "pairs", f"{treebank}:agreement", "--output", str(output)]) == 0
    out = capsys.readouterr().out
    assert "no finite agreeing word" in out and f"{treebank}:agreement" in out
    written, _ = read_pair_file(str(output))
    made, _ = pair_set(f"{treebank}:agreement").read(Sources())
    assert written == made and dict(written[0].record)["verb_id"] == "3"


def test_the_counts_of_several_treebanks_in_one_table(tmp_path, capsys):
    from test_agreement_pairs import SENTENCES, conllu

    first, second = tmp_path / "a.conllu", tmp_path / "b.conllu"
    first.write_text(conllu("a1", *SENTENCES["s-number"]) + conllu("a2", *SENTENCES["s-plural"]), encoding="utf-8")
    second.write_text(conllu("b1", *SENTENCES["s-mwt"]), encoding="utf-8")
    assert main(["data", "pairs", f"{first}:agreement", f"{second}:agreement"]) == 0
    rows = {line.split()[0]: line.split()[1:] for line in capsys.readouterr().out.splitlines()
            if line.startswith(str(tmp_path)) and len(line.split()) > 8}
    assert rows[f"{first}:agreement"][:3] == ["2", "2", "2"]  # arcs, with a pair, pairs
    assert rows[f"{second}:agreement"][:5] == ["1", "0", "0", "0", "1"]  # ... no finite word 0, in a multiword token 1


# ---------------------------------------------------------------------------- hostile files and options

REFUSED: dict = {}
refused = registrar(REFUSED)
CLAMS_ONE = ["clams-de", "--paradigms", "simple_agrmt"]
RUBLIMP_ONE = ["rublimp", "--paradigms", "noun_subj_predicate_agreement_number"]


@refused("CLAMS: a True line without its pair (another True line follows)")
def _(root, monkeypatch):
    path = write_clams(root, "True\ta b\nTrue\tc d\nFalse\tc e\n", monkeypatch)
    return CLAMS_ONE, [f"{path}:1: is a True line without its False line"], [path]


@refused("CLAMS: a True line without its pair (at the end)")
def _(root, monkeypatch):
    path = write_clams(root, "\n".join(CLAMS_LINES[:3]) + "\n", monkeypatch)
    return CLAMS_ONE, [f"{path}:3: is a True line without its False line"], [path]


@refused("CLAMS: a False line without its True line")
def _(root, monkeypatch):
    path = write_clams(root, "\n".join(CLAMS_LINES[:2] + CLAMS_LINES[3:]) + "\n", monkeypatch)
    return CLAMS_ONE, [f"{path}:3: is a False line without the True line"], [path]


@refused("CLAMS: two identical sentences in one pair")
def _(root, monkeypatch):
    path = write_clams(root, "True\tdie Autoren sind alt\nFalse\tdie Autoren sind alt\n", monkeypatch)
    return CLAMS_ONE, [f"{path}:2: repeats the sentence of the True line 1"], [path]


@refused("CLAMS: an extra column")
def _(root, monkeypatch):
    path = write_clams(root, "True\ta b\nFalse\ta c\textra\n", monkeypatch)
    return CLAMS_ONE, [f"{path}:2: has 3 TAB-separated columns, not 2"], [path]


@refused("CLAMS: a row without a sentence")
def _(root, monkeypatch):
    path = write_clams(root, "True\t \nFalse\ta c\n", monkeypatch)
    return CLAMS_ONE, [f"{path}:1: has no sentence after True"], [path]


@refused("CLAMS: a label that is neither True nor False")
def _(root, monkeypatch):
    path = write_clams(root, "true\ta b\nFalse\ta c\n", monkeypatch)
    return CLAMS_ONE, [f"{path}:1: begins with 'true', not True or False"], [path]


@refused("CLAMS: bytes that are not UTF-8")
def _(root, monkeypatch):
    path = write_clams(root, b"True\tder Autor ist alt\nFalse\tder Autor sind \xe4lt\n", monkeypatch)
    return CLAMS_ONE, [f"{path}:2: is not UTF-8 (byte 0xe4"], [path]


@refused("RuBLiMP: an extra column")
def _(root, monkeypatch):
    path = write_rublimp(root, "\n".join([RUBLIMP_HEADER, RUBLIMP_ROWS[0] + ",more"]) + "\n", monkeypatch)
    return RUBLIMP_ONE, [f"{path}:2: has 9 cells for the header's 8 columns (an extra column)"], [path]


@refused("RuBLiMP: a column RuBLiMP does not have")
def _(root, monkeypatch):
    path = write_rublimp(root, "\n".join([RUBLIMP_HEADER.replace("PID", "PIDD"), RUBLIMP_ROWS[0]]) + "\n",
                         monkeypatch)
    return RUBLIMP_ONE, [f"{path}:1: unknown column 'PIDD' (did you mean PID?)"], [path]


@refused("RuBLiMP: a row without a sentence")
def _(root, monkeypatch):
    path = write_rublimp(root, "\n".join([RUBLIMP_HEADER, RUBLIMP_ROWS[0].replace("Коты спит.", "")]) + "\n",
                         monkeypatch)
    return RUBLIMP_ONE, [f"{path}:2: has no target_sentence"], [path]


@refused("RuBLiMP: two identical sentences in one pair")
def _(root, monkeypatch):
    path = write_rublimp(root, "\n".join([RUBLIMP_HEADER, RUBLIMP_ROWS[0].replace("Коты спит.", "Кот спит.")])
                         + "\n", monkeypatch)
    return RUBLIMP_ONE, [f"{path}:2: source_sentence and target_sentence are the same sentence"], [path]


@refused("RuBLiMP: a duplicated id")
def _(root, monkeypatch):
    path = write_rublimp(root, "\n".join([RUBLIMP_HEADER, RUBLIMP_ROWS[0], RUBLIMP_ROWS[1].replace("2,", "1,", 1)])
                         + "\n", monkeypatch)
    return RUBLIMP_ONE, [f"{path}:3: id '1' again (first at line 2)"], [path]


@refused("RuBLiMP: bytes that are not UTF-8")
def _(root, monkeypatch):
    path = write_rublimp(root, (RUBLIMP_HEADER + "\n").encode() + RUBLIMP_ROWS[0].encode()[:-3] + b"\xff\n",
                         monkeypatch)
    return RUBLIMP_ONE, [f"{path}:2: is not UTF-8 (byte 0xff"], [path]


@refused("agreement: a sent_id used twice")
def _(root, monkeypatch):
    from test_agreement_pairs import SENTENCES, conllu

    path = root / "twice.conllu"
    path.write_text(conllu("x", *SENTENCES["s-number"]) + conllu("x", *SENTENCES["s-plural"]), encoding="utf-8")
    return [f"{path}:agreement"], [f"{path}:7: # sent_id x again (first on line 1)"], [path]


@refused("an unknown pair set")
def _(root, monkeypatch):
    return ["clams-en"], ["NAME: unknown pair set 'clams-en' (did you mean clams-de?)"], []


@refused("--lexicon beside a published set")
def _(root, monkeypatch):
    return ["clams-de", "--lexicon", "de_pud"], ["--lexicon: adds forms to pairs made from a treebank"], []


@refused("--blimp beside another set")
def _(root, monkeypatch):
    return ["rublimp", "--blimp", str(root / "blimp")], ["--blimp: is BLiMP's folder; the pair set rublimp is read"], []


@refused("--output among the pair set's files")
def _(root, monkeypatch):
    inside = root / "clams" / "out.jsonl"
    return ["clams-de", "--output", str(inside)], ["is inside"], [root / "clams"]


@refused("--output with two sets")
def _(root, monkeypatch):
    return ["clams-de", "rublimp"], ["--output: writes the pairs of one set; 2 are named"], []


def digest(path: Path) -> str:
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    return hashlib.sha256(b"".join(str(item).encode() + item.read_bytes() for item in files)).hexdigest()


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_a_hostile_file_or_option_is_refused_in_one_line_and_nothing_is_written(case, root, tmp_path, monkeypatch,
                                                                                capsys):
    argv, fragments, inputs = REFUSED[case](root, monkeypatch)
    output = tmp_path / "pairs.jsonl"
    before = {path: digest(path) for path in inputs}
    if "--output" not in argv:
        argv = [*argv, "--output", str(output)]
    code = main(["data", "pairs", *argv, "--minimal-pairs", str(root)] if "--blimp" not in argv
                else ["data", "pairs", *argv])
    out, err = capsys.readouterr()
    assert code == 2 and out == "", err
    assert err.startswith("probing data: error: ") and err.count("\n") == 1 and "Traceback" not in err, err
    for fragment in fragments:
        assert fragment in err, f"{fragment!r} not in {err!r}"
    assert not output.exists() and not list(root.rglob("*.jsonl")) and not list(tmp_path.rglob(".*.tmp"))
    assert {path: digest(path) for path in inputs} == before


# ---------------------------------------------------------------------------- the real sets


@pytest.mark.real_data
@pytest.mark.parametrize("name", ["clams-de", "clams-fr", "clams-ru", "rublimp"])
def test_every_real_file_is_the_pinned_one_and_reads_whole(name):
    folder = real_minimal_pairs("rublimp" if name == "rublimp" else "clams")
    chosen = pair_set(name)
    pairs, described = chosen.read(Sources(str(folder)))
    files = [folder / chosen.subfolder / f"{chosen.prefix}{paradigm}{chosen.suffix}" for paradigm in chosen.paradigms]
    if name == "rublimp":  # a row a pair, after the header
        expected = sum(len(path.read_text(encoding="utf-8").strip().split("\n")) - 1 for path in files)
    else:  # a True line a pair
        expected = sum(path.read_text(encoding="utf-8").count("True\t") for path in files)
    assert len(pairs) == expected and all(pair.good != pair.bad for pair in pairs)
    assert list(dict.fromkeys(pair.uid for pair in pairs)) == list(chosen.paradigms)
    assert described["pair_set"] == name and described["sha256"] == chosen.files.digest(
        [f"{chosen.prefix}{paradigm}{chosen.suffix}" for paradigm in chosen.paradigms])
