"""Every language of UD: relations that mean the same everywhere, halves of test-only treebanks, names.

The relation counts are checked against an independent reading of docs/languages.md section 1, written
here in plain Python straight from the CoNLL-U text (no probing code), on hand-made sentences in the
styles of several languages: German ``det:poss``, French ``det`` with ``Poss=Yes``, English ``nmod:poss``
with its clitic, Hindi and Turkish postpositions, Chinese with no possessor at all.
"""

from __future__ import annotations

import io
import json
import os
import shutil
from pathlib import Path

import pytest
from conftest import _unavailable

from probing.cli import main
from probing.data.datasets.cache import sha256_of
from probing.data.datasets.names import parse_name, treebank_half
from probing.data.datasets.pinned import KNOWN_TREEBANKS
from probing.data.datasets.resolution import heldout_names, lookup, resolve_treebank
from probing.data.inputs import InputSource
from probing.data.relations import relation_pairs
from probing.data.treebank import read_sentences
from probing.errors import ProbingError

SHARED = Path(os.environ.get("PROBING_TREEBANKS") or Path(__file__).resolve().parents[2] / "shared" / "treebanks")


def _sentence(rows: list[tuple]) -> str:
    """CoNLL-U text of one sentence from (form, upos, feats, head, label[, misc]) rows."""
    lines = []
    for number, row in enumerate(rows, start=1):
        form, upos, feats, head, label, *misc = row
        lines.append("\t".join([str(number), form, form.lower(), upos, "_", feats, str(head), label, "_",
                                misc[0] if misc else "_"]))
    return "\n".join(lines) + "\n\n"


STYLES = {
    # German: possessive determiner labelled det:poss
    "de": [("Er", "PRON", "_", 2, "nsubj"), ("sieht", "VERB", "_", 0, "root"),
           ("seinen", "DET", "Poss=Yes", 4, "det:poss"), ("Hund", "NOUN", "_", 2, "obj"),
           ("mit", "ADP", "_", 7, "case"), ("dem", "DET", "_", 7, "det"), ("Ball", "NOUN", "_", 2, "obl", "SpaceAfter=No"),
           (".", "PUNCT", "_", 2, "punct")],
    # French: possessive determiner labelled plain det, marked Poss=Yes
    "fr": [("Son", "DET", "Gender=Masc|Number=Sing|Poss=Yes", 2, "det"), ("chat", "NOUN", "_", 3, "nsubj"),
           ("dort", "VERB", "_", 0, "root"), ("sur", "ADP", "_", 6, "case"), ("le", "DET", "Definite=Def", 6, "det"),
           ("lit", "NOUN", "_", 3, "obl")],
    # English: nmod:poss with the clitic that the paper scores instead
    "en": [("John", "PROPN", "_", 3, "nmod:poss"), ("'s", "PART", "_", 1, "case"), ("dog", "NOUN", "_", 4, "nsubj"),
           ("barks", "VERB", "_", 0, "root")],
    # Hindi: postpositions after their nominal; a possessor marked by a postposition is nmod, not poss
    "hi": [("राम", "PROPN", "_", 4, "nsubj"), ("ने", "ADP", "_", 1, "case"), ("किताब", "NOUN", "_", 4, "obj"),
           ("पढ़ी", "VERB", "_", 0, "root"), ("घर", "NOUN", "_", 4, "obl"), ("में", "ADP", "_", 5, "case")],
    # Turkish: a postposition and a possessive suffix (no possessor word)
    "tr": [("Okul", "NOUN", "_", 4, "obl"), ("için", "ADP", "_", 1, "case"), ("kitabını", "NOUN", "Number[psor]=Sing", 4, "obj"),
           ("okudu", "VERB", "_", 0, "root")],
    # Chinese: no possessor label at all; a determiner that is not possessive
    "zh": [("这", "DET", "_", 2, "det", "SpaceAfter=No"), ("本", "NOUN", "_", 3, "clf", "SpaceAfter=No"),
           ("书", "NOUN", "_", 4, "nsubj", "SpaceAfter=No"), ("好", "ADJ", "_", 0, "root")],
}


def independent_counts(text: str) -> dict[str, int]:
    """Pairs per relation, read from CoNLL-U text by docs/languages.md section 1 alone."""
    counts = {"dobj": 0, "det": 0, "pobj": 0, "poss": 0, "all": 0}
    for block in text.strip().split("\n\n"):
        rows = [line.split("\t") for line in block.splitlines() if line and not line.startswith("#")]
        rows = [row for row in rows if row[0].isdigit()]
        for row in rows:
            label, head, upos, feats = row[7], int(row[6]), row[3], row[5].split("|")
            base = label.split(":")[0]
            counts["dobj"] += base in ("obj", "dobj")
            counts["det"] += label == "det"
            counts["pobj"] += label == "pobj" or (base == "case" and upos == "ADP" and head != 0)
            counts["poss"] += label in ("nmod:poss", "det:poss", "poss") or (base == "det" and "Poss=Yes" in feats)
            counts["all"] += head != 0
    return counts


@pytest.mark.parametrize("style", sorted(STYLES))
def test_relation_counts_equal_an_independent_reading_of_the_rules(style):
    text = _sentence(STYLES[style])
    sentences = list(read_sentences(io.StringIO(text), source=f"{style}.conllu"))
    counted = {name: sum(len(relation_pairs(name, s)) for s in sentences) for name in independent_counts(text)}
    assert counted == independent_counts(text)


def test_possessors_of_every_style():
    def pairs(style):
        return relation_pairs("poss", next(read_sentences(io.StringIO(_sentence(STYLES[style])))))

    assert pairs("de") == [(2, 3)]  # seinen -> Hund (det:poss)
    assert pairs("fr") == [(0, 1)]  # Son -> chat (det with Poss=Yes)
    assert pairs("en") == [(1, 2)]  # the clitic 's is scored in place of John
    assert pairs("hi") == pairs("tr") == pairs("zh") == []  # no possessor word: no pair, no error


def test_postpositions_are_prepositional_objects():
    hindi = next(read_sentences(io.StringIO(_sentence(STYLES["hi"]))))
    # ने after राम and में after घर: the nominal depends on its postposition, as for a preposition
    assert relation_pairs("pobj", hindi) == [(0, 1), (4, 5)]


def test_a_relation_without_pairs_is_counted_zero_and_shown_as_none(tmp_path):
    from probing.report.board import Cell, Row, cell_text, rank_rows

    zh = tmp_path / "zh.conllu"
    zh.write_text(_sentence(STYLES["zh"]), encoding="utf-8")
    assert sum(len(relation_pairs("poss", s)) for s in read_sentences(io.StringIO(zh.read_text()))) == 0
    assert cell_text(Cell(accuracy=None, pairs=0)) == "none"
    # a relation with no pairs is never ranked: the rows are ranked on the others
    rows = [Row("a", "model", "held-out", "zh", {"det": Cell(0.5, pairs=4), "poss": Cell(None, pairs=0)}),
            Row("b", "model", "held-out", "zh", {"det": Cell(0.7, pairs=4), "poss": Cell(None, pairs=0)})]
    ranked = rank_rows(rows, ["det", "poss"])
    assert [(row.model, row.rank) for row in ranked] == [("b", "1"), ("a", "2")]


# ------------------------------------------------------------------ halves


def _numbered_treebank(path: Path, sentences: int) -> Path:
    """A treebank whose sentence k has k+1 words, so a sentence's length says its index in the file."""
    text = []
    for k in range(sentences):
        rows = [("w", "NOUN", "_", 0 if i == 0 else 1, "root" if i == 0 else "dep") for i in range(k + 1)]
        text.append(f"# sent_id = {k}\n" + _sentence(rows))
    path.write_text("".join(text), encoding="utf-8")
    return path


def test_halves_take_the_first_limit_sentences_then_even_or_odd(tmp_path):
    path = _numbered_treebank(tmp_path / "t.conllu", 7)
    read = lambda half, limit=None: [(u.index, u.sentence.index) for u in
                                     InputSource(path, "treebank", half=half, limit=limit).units()]
    assert read("even") == [(0, 0), (1, 2), (2, 4), (3, 6)]
    assert read("odd") == [(0, 1), (1, 3), (2, 5)]
    assert read("even", limit=4) == [(0, 0), (1, 2)] and read("odd", limit=4) == [(0, 1), (1, 3)]
    source = InputSource(path, "treebank", half="odd", limit=4)
    list(source.units())
    assert source.units_total == 7  # the whole file was read (and checked)
    assert source.describe()["half"] == {"half": "odd", "limit": 4, "rule": (
        "of the first 4 sentences of the file, the sentences with an odd 0-based index, numbered again from 0")}


def test_names_of_halves_and_of_the_whole_file(tmp_path, monkeypatch):
    monkeypatch.setenv("PROBING_TREEBANKS", str(tmp_path))
    monkeypatch.setenv("PROBING_CACHE", str(tmp_path / "cache"))
    (tmp_path / "xx_toy").mkdir()
    whole = _numbered_treebank(tmp_path / "xx_toy" / "xx_toy-ud-test.conllu", 5)
    assert heldout_names("xx_toy") == ("xx_toy:even", "xx_toy:odd")
    assert resolve_treebank("xx_toy:even") == resolve_treebank("xx_toy:test") == resolve_treebank("xx_toy") == whole
    assert treebank_half("xx_toy:odd") == "odd" and treebank_half("xx_toy:test") is None
    assert InputSource.treebank("xx_toy:odd").half == "odd"
    assert heldout_names("en_ewt") == ("en_ewt:dev", "en_ewt:test")
    for pud in (name for name in KNOWN_TREEBANKS if name.endswith("_pud")):
        assert heldout_names(pud) == (f"{pud}:even", f"{pud}:odd")
    with pytest.raises(ProbingError, match="halves are for a treebank with one split"):
        resolve_treebank("en_ewt:even")
    with pytest.raises(ProbingError, match="no whole documents"):
        InputSource.documents("xx_toy:odd")


def test_score_chooses_on_the_even_half_and_reports_on_the_odd(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PROBING_TREEBANKS", str(tmp_path))
    (tmp_path / "xx_toy").mkdir()
    shutil.copyfile(Path(__file__).resolve().parents[1] / "data" / "sample.conllu",
                    tmp_path / "xx_toy" / "xx_toy-ud-test.conllu")
    output = tmp_path / "r.json"
    assert main(["score", "--treebank", "xx_toy", "--limit", "20", "--bootstrap", "20", "--quiet",
                 "--output", str(output)]) == 0
    result = json.loads(output.read_text())
    assert result["treebank"]["path"] == "xx_toy:odd" and result["treebank"]["sentences_scored"] == 10
    assert result["treebank"]["half"]["half"] == "odd" and result["treebank"]["half"]["limit"] == 20
    select_on = result["heldout"]["select_on"]
    assert select_on["treebank"]["path"] == "xx_toy:even" and select_on["treebank"]["half"]["half"] == "even"
    assert select_on["treebank"]["sentences_scored"] == 10
    assert result["heldout"]["relations"]["det"]["heldout"]["head"]["interval"] is not None
    assert "chosen on xx_toy:even" in capsys.readouterr().out


def test_a_pud_file_with_a_wrong_sha256_is_refused(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PROBING_TREEBANKS", str(tmp_path))
    (tmp_path / "ko_pud").mkdir()
    shutil.copyfile(Path(__file__).resolve().parents[1] / "data" / "sample.conllu",
                    tmp_path / "ko_pud" / "ko_pud-ud-test.conllu")
    assert main(["score", "--treebank", "ko_pud", "--quiet"]) == 2
    error = capsys.readouterr().err.strip()
    assert "sha256 mismatch for ko_pud-ud-test.conllu" in error and KNOWN_TREEBANKS["ko_pud"].files[0].sha256 in error
    assert len(error.splitlines()) == 1


@pytest.mark.real_data
@pytest.mark.parametrize("name", ["ar_pud", "de_pud", "fi_pud", "fr_pud", "hi_pud", "ru_pud", "tr_pud", "zh_pud"])
def test_every_shared_pud_file_is_the_pinned_one(name, monkeypatch):
    tb_file = KNOWN_TREEBANKS[name].file("test")
    if not (SHARED / name / tb_file.filename).is_file():
        _unavailable(f"the shared {name}", "set PROBING_TREEBANKS to the folder holding the PUD treebanks")
    monkeypatch.setenv("PROBING_TREEBANKS", str(SHARED))
    assert resolve_treebank(f"{name}:odd") == SHARED / name / tb_file.filename
    assert sha256_of(SHARED / name / tb_file.filename) == tb_file.sha256  # the file itself, no README.md needed


def test_the_pud_pins_are_one_test_file_each_at_a_full_commit_and_known_by_their_repository():
    puds = [KNOWN_TREEBANKS[name] for name in KNOWN_TREEBANKS if name.endswith("_pud")]
    assert len(puds) == 14
    for tb in puds:
        assert tb.splits == ("test",) and len(tb.commit) == 40 and len(tb.files[0].sha256) == 64
        assert lookup(tb.repo) is tb and parse_name(f"{tb.repo}:odd") == (tb.repo, "odd")


def test_shards_of_a_half_merge_into_the_whole_half(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PROBING_TREEBANKS", str(tmp_path))
    (tmp_path / "xx_toy").mkdir()
    shutil.copyfile(Path(__file__).resolve().parents[1] / "data" / "sample.conllu",
                    tmp_path / "xx_toy" / "xx_toy-ud-test.conllu")
    common = ["score", "--treebank", "xx_toy:odd", "--limit", "16", "--bootstrap", "10", "--relations", "det", "all",
              "--quiet"]
    assert main(common + ["--output", str(tmp_path / "whole.json")]) == 0
    for index in range(2):
        assert main(common + ["--shard", f"{index}/2", "--output", str(tmp_path / f"part{index}.json")]) == 0
    assert main(["merge", str(tmp_path / "part0.json"), str(tmp_path / "part1.json"),
                 "--output", str(tmp_path / "merged.json")]) == 0
    capsys.readouterr()
    whole, merged = (json.loads((tmp_path / f"{name}.json").read_text()) for name in ("whole", "merged"))
    assert merged["relations"] == whole["relations"]
    assert merged["treebank"]["half"] == whole["treebank"]["half"] == {
        "half": "odd", "limit": 16, "rule": whole["treebank"]["half"]["rule"]}
    assert merged["treebank"]["sentences_scored"] == 8


@pytest.mark.real_data
def test_score_on_a_real_pud_file_checks_it_and_holds_out_by_halves(tmp_path, monkeypatch, capsys):
    from probing.testing import tiny_bert

    tb_file = KNOWN_TREEBANKS["de_pud"].file("test")
    if not (SHARED / "de_pud" / tb_file.filename).is_file():
        _unavailable("the shared de_pud", "set PROBING_TREEBANKS to the folder holding the PUD treebanks")
    monkeypatch.setenv("PROBING_TREEBANKS", str(SHARED))
    output = tmp_path / "de.json"
    assert main(["score", "--model", tiny_bert(), "--treebank", "de_pud", "--limit", "12", "--bootstrap", "20",
                 "--quiet", "--output", str(output)]) == 0
    capsys.readouterr()
    result = json.loads(output.read_text())
    assert result["treebank"]["sha256"] == tb_file.sha256 and result["treebank"]["path"] == "de_pud:odd"
    assert result["heldout"]["select_on"]["treebank"]["path"] == "de_pud:even"
    # German marks possessors det:poss: the relation has pairs here
    assert result["heldout"]["relations"]["poss"]["dev"]["pairs"] + result["relations"]["poss"]["total"] > 0
