"""`probing plot`: valid PNGs of a sensible size, for held-out and in-sample results."""

from __future__ import annotations

import json
import struct

import heldout_runs
import numpy as np
import pytest

from probing.analyses.probe.plots import accuracy_grid, chosen, plot_overview, plot_relation
from probing.cli import main

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def png_size(path) -> tuple[int, int]:
    """Width and height from the IHDR chunk, after checking the signature."""
    data = path.read_bytes()
    assert data[:8] == PNG_SIGNATURE and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


@pytest.fixture(scope="module")
def results():
    return heldout_runs.results()


def test_relation_figure_is_a_sensible_png(results, tmp_path):
    path = plot_relation(results["heldout"], "det", tmp_path / "det.png")
    width, height = png_size(path)
    assert 600 <= width <= 4000 and 200 <= height <= 3000
    assert width > height  # two panels side by side
    assert 10_000 < path.stat().st_size < 2_000_000


def test_overview_has_a_row_per_relation(results, tmp_path):
    path = plot_overview(results["heldout"], tmp_path / "all.png")
    width, height = png_size(path)
    assert height > width  # five relation rows of two panels
    assert 10_000 < path.stat().st_size < 3_000_000


def test_marked_head_is_the_dev_choice_or_the_in_sample_best(results):
    heldout, in_sample = results["heldout"], results["test"]
    assert chosen(heldout, "det")["head"] == heldout["heldout"]["relations"]["det"]["heldout"]["head"]
    best = in_sample["relations"]["det"]["best"]
    marked = chosen(in_sample, "det")["head"]
    assert (marked["layer"], marked["head"], marked["direction"]) == (best["layer"], best["head"], best["direction"])


def test_accuracy_grid_layers_down_heads_across(results):
    entry = results["test"]["relations"]["det"]
    grid = accuracy_grid(entry)
    assert grid.shape == (2, 2, 4)  # [direction, layer, head] of the tiny 2x4 BERT
    assert grid[1, 0, 3] == entry["heads"]["head_to_dep"][0][3] / entry["total"]
    assert np.isnan(accuracy_grid({"total": 0, "heads": {"dep_to_head": [[0]], "head_to_dep": [[0]]}})).all()


def test_command_line(results, tmp_path, capsys):
    source = tmp_path / "r.json"
    source.write_text(json.dumps(results["test"]))
    assert main(["plot", str(source), "--output", str(tmp_path / "o.png")]) == 0
    assert main(["plot", str(source), "--relation", "pobj", "--output", str(tmp_path / "p.png"), "--dpi", "80"]) == 0
    png_size(tmp_path / "o.png"), png_size(tmp_path / "p.png")
    assert main(["plot", str(source), "--relation", "amod", "--output", str(tmp_path / "x.png")]) == 2
    assert "amod" in capsys.readouterr().err
    assert not (tmp_path / "x.png").exists()


def test_surface_results_of_several_readings_are_drawn_side_by_side(tmp_path, capsys):
    from probing.testing import tiny_bert

    paths = []
    for reading in ("weights", "norms"):
        path = tmp_path / f"{reading}.json"
        assert main(["surface", "--quiet", "--model", tiny_bert(), "--limit", "5", "--attention", reading,
                     "--output", str(path)]) == 0
        paths.append(str(path))
    figure = tmp_path / "readings.svg"
    assert main(["plot", *paths, "--output", str(figure)]) == 0
    assert figure.read_text(encoding="utf-8").startswith("<?xml")
    capsys.readouterr()
    probe = tmp_path / "probe.json"
    assert main(["score", "--quiet", "--model", tiny_bert(), "--limit", "5", "--bootstrap", "0",
                 "--output", str(probe)]) == 0
    assert main(["plot", str(probe), paths[0], "--output", str(tmp_path / "x.png")]) == 2
    assert "only for probing surface results" in capsys.readouterr().err


def test_a_token_kind_no_reading_saw_gets_no_panel(tmp_path, capsys):
    """A decoder's input has no separator: its readings figure shows the sink and punctuation only, and a
    deep stack's layer axis is labelled sparsely rather than with every number run together."""
    from helpers import tiny_model

    paths = []
    for reading in ("weights", "rollout"):
        path = tmp_path / f"{reading}.json"
        assert main(["surface", "--quiet", "--model", tiny_model("gpt2", num_layers=20), "--limit", "4",
                     "--attention", reading, "--output", str(path)]) == 0
        paths.append(str(path))
    figure = tmp_path / "readings.svg"
    assert main(["plot", *paths, "--output", str(figure)]) == 0
    capsys.readouterr()
    svg = figure.read_text(encoding="utf-8")
    assert "not measured" not in svg
    assert svg.count("<g id=\"axes_") == 2  # first special token (the sink) and punctuation
    assert "layer" in svg
