"""`probing leaderboard`: rows, sorting, ties, missing relations, and every format parsed back."""

from __future__ import annotations

import copy
import csv
import io
import json
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import heldout_runs
import numpy as np
import pytest

from probing.cli import main
from probing.commands.leaderboard import file_links
from probing.report.board import build_leaderboard, cell_text, read_json
from probing.report.escaping import latex_text
from probing.report.renderers import FORMATS, render, render_html
from probing.results.schema.arrays import decode_array, encode_array

REFERENCE = Path(__file__).resolve().parents[1] / "leaderboards" / "reference" / "clark2019-bert-base-wsj.json"


def without_relation(result: dict, name: str) -> dict:
    """The result as if scored without relation ``name``, and without a bootstrap (its replicate sums held the
    relation; the held-out intervals stay as computed)."""
    index = list(result["relations"]).index(name)
    del result["relations"][name], result["heldout"]["relations"][name]
    result["bootstrap"] = None
    result["state"] = {key: encode_array(np.delete(decode_array(value), index, axis=0)) if decode_array(value).ndim
                       else value for key, value in result["state"].items() if not key.startswith("boot_")}
    return result


def renamed(result: dict, name: str) -> dict:
    result = copy.deepcopy(result)
    result["model"]["name_or_path"] = name
    result["model"]["name"] = Path(name).name
    return result


@pytest.fixture(scope="module")
def board_inputs():
    """A held-out result, a tie of it under another name, one lacking a relation, and the paper reference."""
    heldout = heldout_runs.results()["heldout"]
    lacking = without_relation(renamed(heldout, "/models/lacks_nsubj"), "nsubj")
    results = [renamed(heldout, "/models/model_a"), renamed(heldout, "/models/<i>model_b&co"), lacking]
    return results, [read_json(REFERENCE)]


@pytest.fixture(scope="module")
def board(board_inputs):
    return build_leaderboard(*board_inputs)


def test_rows_baseline_reference_and_columns(board):
    assert board.relations == list(heldout_runs.RELATIONS)
    kinds = [row.kind for row in board.rows]
    assert kinds.count("model") == 3 and kinds.count("baseline") == 1
    assert kinds[-2:] == ["reference", "reference"]  # the paper's model and baseline rows, unranked, last
    assert {row.rank for row in board.rows if row.kind == "reference"} == {"ref"}
    assert all(row.selection == "held-out" for row in board.rows if row.kind in ("model", "baseline"))
    assert all(row.selection == "in-sample" for row in board.rows if row.kind == "reference")


def test_sorted_ties_share_a_rank_and_missing_relations_rank_last(board):
    ranked = [row for row in board.rows if row.kind != "reference"]
    means = [row.mean for row in ranked if row.mean is not None]
    assert means == sorted(means, reverse=True)
    ties = [row for row in ranked if row.model in ("model_a", "<i>model_b&co")]
    assert ties[0].rank == ties[1].rank and ties[0].rank.startswith("=")
    lacking = ranked[-1]
    assert lacking.model == "lacks_nsubj" and lacking.rank == "-" and lacking.mean is None
    assert cell_text(lacking.cells.get("nsubj")) == "not scored"


def test_cells_hold_heldout_accuracy_interval_and_head_from_1(board, board_inputs):
    row = next(row for row in board.rows if row.model == "model_a")
    entry = board_inputs[0][0]["heldout"]["relations"]["det"]["heldout"]["head"]
    cell = row.cells["det"]
    assert cell.accuracy == entry["accuracy"] and cell.interval == entry["interval"]
    assert cell.head == f"{entry['layer'] + 1}-{entry['head'] + 1}"
    assert cell_text(cell).startswith(f"{100 * entry['accuracy']:.1f} [{100 * entry['interval'][0]:.1f}, ")


def test_results_without_heldout_show_in_sample_numbers_marked(board_inputs):
    in_sample = heldout_runs.results()["test"]
    board = build_leaderboard([in_sample])
    model = next(row for row in board.rows if row.kind == "model")
    assert model.selection == "in-sample"
    best = in_sample["relations"]["det"]["best"]
    assert model.cells["det"].accuracy == best["accuracy"]
    assert model.cells["det"].interval is not None  # from the result's own replicates


def test_markdown(board):
    text = render(board, "md")
    table = [line for line in text.splitlines() if line.startswith("|")]
    assert len(table) == 2 + len(board.rows)
    assert "counted from 1" in text and "held-out" in text and "Clark" in text


def test_csv_parses_back(board):
    rows = list(csv.DictReader(io.StringIO(render(board, "csv"))))
    assert len(rows) == len(board.rows)
    assert {"det_acc_pct", "det_low_pct", "det_high_pct", "det_head_from_1", "mean_acc_pct"} <= set(rows[0])
    first = board.rows[0]
    assert rows[0]["model"] == first.model
    assert float(rows[0]["det_acc_pct"]) == pytest.approx(100 * first.cells["det"].accuracy, abs=0.005)
    assert rows[0]["det_head_from_1"] == first.cells["det"].head
    lacking = next(row for row in rows if row["model"] == "lacks_nsubj")
    assert lacking["nsubj_acc_pct"] == "" and lacking["rank"] == "-"


def test_json_parses_back(board):
    data = json.loads(render(board, "json"))
    assert "from 1" in data["counting"]
    assert data["relations"] == board.relations and len(data["rows"]) == len(board.rows)
    first = data["rows"][0]
    assert first["cells"]["det"]["head"] == board.rows[0].cells["det"].head
    assert next(r for r in data["rows"] if r["model"] == "lacks_nsubj")["cells"]["nsubj"] is None


class BoardHTML(HTMLParser):
    """The parts of a leaderboard page: column headers, group headers, and each row's cells with their
    ``data-sort`` key and whether they are marked best."""

    def __init__(self):
        super().__init__()
        self.headers, self.groups, self.rows, self.tags = [], [], [], []
        self.cell = self.part = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append(tag)
        if tag == "thead":
            self.part = "head"
        elif tag == "tbody":
            self.part = "body"
        elif tag == "tr" and self.part == "body" and "group-head" not in (attrs.get("class") or ""):
            self.rows.append({"kind": attrs.get("class"), "cells": []})
        elif tag in ("td", "th"):
            self.cell = {"text": "", "sort": attrs.get("data-sort"), "best": "best" in (attrs.get("class") or ""),
                         "aria-sort": attrs.get("aria-sort")}

    def handle_endtag(self, tag):
        if tag == "th" and self.part == "head":
            self.headers.append(self.cell)
        elif tag == "th":
            self.groups.append(" ".join(self.cell["text"].split()))
        elif tag == "td":
            self.cell["text"] = " ".join(self.cell["text"].split())
            self.rows[-1]["cells"].append(self.cell)
        if tag in ("td", "th"):
            self.cell = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell["text"] += data


def test_html_is_one_page_grouped_sortable_and_parses_back(board):
    text = render(board, "html")
    page = BoardHTML()
    page.feed(text)
    assert [header["text"] for header in page.headers] == ["rank", "model", *board.relations, "mean"]
    assert all(header["aria-sort"] == "none" for header in page.headers)  # sortable, none sorted yet
    assert "<button" in text and "<script>" in text
    assert len(page.rows) == len(board.rows)
    # selection and treebank are said once per group, not on every row
    treebanks = list(dict.fromkeys(row.treebank for row in board.rows))
    assert len(page.groups) == len(treebanks)
    assert all(treebank.replace(" -> ", " → ") in group for treebank, group in zip(treebanks, page.groups))
    assert "held-out" in page.groups[0] and page.groups[-1].startswith("Reference")
    models = [row["cells"][1]["text"] for row in page.rows]
    assert models == [row.model for row in board.rows]
    assert "<i>model_b&co" in models  # escaped: text, not markup
    assert "i" not in page.tags  # no tag from the model name leaked into the page
    assert text.startswith("<!DOCTYPE html>") and "<style>" in text
    assert "http" not in text  # self-contained: no link, stylesheet or script from elsewhere


def test_html_marks_the_best_cell_of_each_column_within_a_group(board):
    page = BoardHTML()
    page.feed(render(board, "html"))
    ranked = [(row, html_row) for row, html_row in zip(board.rows, page.rows) if row.kind != "reference"]
    for column, name in enumerate(board.relations, start=2):
        values = [row.cells[name].accuracy for row, _ in ranked if row.cells.get(name) and row.cells[name].accuracy]
        for row, html_row in ranked:
            cell = html_row["cells"][column]
            accuracy = row.cells.get(name) and row.cells[name].accuracy
            assert cell["best"] == (accuracy == max(values)), (row.model, name)
            if accuracy is not None:
                assert float(cell["sort"]) == pytest.approx(accuracy, abs=1e-6)
                assert cell["text"].startswith(f"{100 * accuracy:.1f}")
    assert not any(cell["best"] for row in page.rows if row["kind"] == "reference" for cell in row["cells"])


def test_html_links_each_model_to_its_files(board_inputs, tmp_path, capsys):
    result = board_inputs[0][0]
    path = tmp_path / "results" / "model_a.json"
    path.parent.mkdir()
    path.write_text(json.dumps(result))
    (tmp_path / "plots").mkdir()
    (tmp_path / "plots" / "model_a.png").write_bytes(b"png")
    output = tmp_path / "board.html"
    assert main(["leaderboard", str(path), "--format", "html", "--output", str(output)]) == 0
    text = output.read_text()
    assert 'href="plots/model_a.png"' in text and "pages/" not in text  # only files that exist are linked
    (tmp_path / "pages").mkdir()
    (tmp_path / "pages" / "model_a.html").write_text("<!DOCTYPE html>")
    assert main(["leaderboard", str(path), "--format", "html", "--output", str(output)]) == 0
    assert 'href="pages/model_a.html"' in output.read_text()
    capsys.readouterr()


def test_a_shard_part_says_which_part_it_is_on_its_row(board_inputs, tmp_path, capsys):
    """A --shard part holds that part's units only: its row says so, as --shard named it."""
    result = copy.deepcopy(board_inputs[0][0])
    result["config"]["shard"] = {"index": 1, "count": 4}
    part, whole = tmp_path / "part.json", tmp_path / "whole.json"
    part.write_text(json.dumps(result))
    whole.write_text(json.dumps(board_inputs[0][0]))
    assert main(["leaderboard", str(part), str(whole)]) == 0
    models = [line.split("|")[2].strip() for line in capsys.readouterr().out.splitlines() if line.startswith("| ")]
    assert "model_a (part 2 of 4, --shard 1/4)" in models and "model_a" in models


def test_a_rerun_beside_the_earlier_file_gets_rows_told_apart_by_file(board_inputs, tmp_path, capsys):
    """Two results that make rows alike (the same model, selection and treebank: a rerun beside the committed
    file) show their file names, their paths where the names are alike too; rows that differ show none, and the
    HTML links still find each row's files."""
    first, other = board_inputs[0][0], board_inputs[0][1]
    paths = {name: tmp_path / name for name in ("results/model_a.json", "rerun/model_a.json", "rerun.json",
                                                 "results/other.json")}
    for name, path in paths.items():
        path.parent.mkdir(exist_ok=True)
        path.write_text(json.dumps(other if name == "results/other.json" else first))

    def models(*names: str) -> list[str]:
        assert main(["leaderboard", *(str(paths[name]) for name in names), "--format", "csv"]) == 0
        rows = csv.DictReader(io.StringIO(capsys.readouterr().out))
        return sorted(row["model"] for row in rows if row["kind"] == "model")

    assert models("results/model_a.json", "rerun.json", "results/other.json") == [
        "<i>model_b&co", "model_a (model_a.json)", "model_a (rerun.json)"]
    assert models("results/model_a.json", "rerun/model_a.json") == sorted(
        f"model_a ({paths[name]})" for name in ("results/model_a.json", "rerun/model_a.json"))
    assert models("results/model_a.json", "results/other.json") == ["<i>model_b&co", "model_a"]
    (tmp_path / "plots").mkdir()
    (tmp_path / "plots" / "rerun.png").write_bytes(b"png")
    output = tmp_path / "board.html"
    assert main(["leaderboard", str(paths["results/model_a.json"]), str(paths["rerun.json"]), "--format", "html",
                 "--output", str(output)]) == 0
    capsys.readouterr()
    assert output.read_text().count('href="plots/rerun.png"') == 1


def test_latex_structure_without_compiling(board):
    text = render(board, "latex")
    for command in ("\\begin{tabular}", "\\toprule", "\\midrule", "\\bottomrule", "\\end{tabular}"):
        assert command in text
    assert "booktabs" in text
    lines = text.splitlines()
    body = lines[lines.index("\\midrule") + 1 : lines.index("\\bottomrule")]
    rows = [line for line in body if line.endswith("\\\\")]
    assert len(rows) == len(board.rows)
    columns = 5 + len(board.relations)
    spec = re.search(r"\\begin\{tabular\}\{([^}]*)\}", text).group(1).replace(" ", "")
    assert len(spec) == columns
    assert all(len(re.split(r"(?<!\\)&", row)) == columns for row in rows)
    assert not re.search(r"(?<!\\)_", "\n".join(rows))  # every underscore escaped
    assert "lacks\\_nsubj" in text and "\\&co" in text
    assert latex_text("50%_x") == "50\\%\\_x"


def test_command_writes_each_format(board_inputs, tmp_path, capsys):
    paths = []
    for index, result in enumerate(board_inputs[0]):
        path = tmp_path / f"r{index}.json"
        path.write_text(json.dumps(result))
        paths.append(str(path))
    for fmt in FORMATS:
        output = tmp_path / f"board.{fmt}"
        assert main(["leaderboard", *paths, "--reference", str(REFERENCE), "--format", fmt, "--output", str(output)]) == 0
        assert output.stat().st_size > 500
    assert main(["leaderboard", paths[0]]) == 0
    assert "| rank" in capsys.readouterr().out


def test_bad_inputs_fail_with_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema_version": "0"}')
    assert main(["leaderboard", str(bad)]) == 2
    assert f"{bad}: schema_version: expected one of 1, 2, 3, found '0'" in capsys.readouterr().err
    assert main(["leaderboard", str(tmp_path / "missing.json")]) == 2


@pytest.mark.slow
def test_leaderboard_and_plot_never_import_torch():
    code = (
        "import sys, probing.cli, probing.commands.leaderboard, probing.commands.plot, probing.report.board, "
        "probing.analyses.probe.plots, probing.stats.heldout, probing.stats.selection, probing.stats.intervals; "
        "assert 'torch' not in sys.modules, 'torch imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


COMMITTED = Path(__file__).resolve().parents[1] / "leaderboards"
SUFFIXES = {"md": "md", "csv": "csv", "json": "json", "latex": "tex", "html": "html"}


@pytest.fixture(scope="module", params=sorted(path.parent.name for path in COMMITTED.glob("*/leaderboard.md")))
def committed(request):
    """A committed leaderboard folder and the board made again from its results and the paper's reference,
    in the order leaderboards/make.sh gives them (its shell glob, sorted)."""
    from probing.report.board import board_results

    folder = COMMITTED / request.param
    results, references = board_results(sorted(str(path) for path in (folder / "results").glob("*.json")), [REFERENCE])
    return folder, results, build_leaderboard([result for _, result in results], references)


@pytest.mark.parametrize("fmt", list(SUFFIXES))
def test_committed_leaderboards_come_out_byte_for_byte(committed, fmt):
    folder, results, board = committed
    if fmt == "html":  # as make.sh writes it: --output beside plots/, so each model links to its plots
        text = render_html(board, file_links(results, str(folder / "leaderboard.html"), "plots", "pages"))
    else:
        text = render(board, fmt)
    assert text == (folder / f"leaderboard.{SUFFIXES[fmt]}").read_text(encoding="utf-8")
