"""The leaderboard of ablate --chosen results: one table, chosen against matched random heads (tiny models)."""

from __future__ import annotations

import json
import os
import re

import pytest
from helpers import tiny_model

from probing.cli import main


def chosen_results(folder, family: str, blimp: str | None = None) -> list:
    """A DEV probe result of a tiny model (the sample's dev split), then ablate --chosen det nsubj on lm and probe
    (the test split) and BLiMP."""
    from probing.testing import sample_split

    model, dev = tiny_model(family), folder / f"{family}-dev.json"
    treebank_dev, test = sample_split()
    assert main(["score", "--quiet", "--model", model, "--treebank", treebank_dev, "--limit", "20", "--relations",
                 "det", "nsubj", "--bootstrap", "0", "--output", str(dev)]) == 0
    common = ["ablate", "--quiet", "--model", model, "--bootstrap", "20", "--chosen", "det", "nsubj", "--k", "1", "2",
              "--random", "5", "--select-on", str(dev)]
    units = ["--treebank", test, "--limit", "12"]
    outputs = []
    for metric, extra in [("lm", units), ("probe", [*units, "--relations", "det", "nsubj", "all"])]\
            + ([("minimal-pairs", ["--blimp", blimp, "--limit", "4", "--paradigms", "wh_island",
                                   "regular_plural_subject_verb_agreement_1"])] if blimp else []):
        output = folder / f"{family}-{metric}.json"
        assert main([*common, "--metric", metric, *extra, "--output", str(output)]) == 0
        outputs.append(output)
    return outputs


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    folder = tmp_path_factory.mktemp("board")
    return chosen_results(folder, "llama") + chosen_results(folder, "gpt2")


def test_one_row_per_model_relation_and_k_with_chosen_and_random_columns(results, capsys):
    from probing.report.board import leaderboard_from_files

    capsys.readouterr()
    (table,) = leaderboard_from_files(results).tables
    assert table.key == "versus" and table.relations == ["lm loss: chosen", "lm loss: random", "probe: own relation: chosen",
                                                         "probe: own relation: random", "probe: all: chosen",
                                                         "probe: all: random"]
    models = [row.model for row in table.rows]
    assert len(models) == 8 and any("det top 1" in m for m in models) and any("nsubj top 2" in m for m in models)
    row = next(row for row in table.rows if row.model.endswith("det top 2"))
    versus = json.loads(next(path for path in results if "llama-lm" in path.name).read_text())["versus"]
    entry = versus["parts"]["loss"]["det@2"]
    if row.model.startswith("llama"):
        assert row.cells["lm loss: chosen"].accuracy == entry["chosen"]["effect"]
        assert row.cells["lm loss: random"].interval == entry["random"]["percentiles"]
    assert row.cells["lm loss: chosen"].scale == "nats" and row.cells["probe: all: chosen"].scale == "points"
    random = entry["random"]
    drawn = f"all {random['draws']} sets" if entry["exact"] else "5 draws"  # a space no larger than 5: all of it
    assert row.cells["lm loss: random"].head.startswith(drawn) and entry["exact"] == (entry["space"] <= 5)
    assert row.cells["probe: own relation: chosen"].head.startswith("p=")
    assert ", Holm " in row.cells["probe: own relation: chosen"].head


@pytest.mark.parametrize("fmt", ["md", "csv", "json", "latex", "html"])
def test_the_table_renders_in_every_format(results, fmt, tmp_path, capsys):
    output = tmp_path / f"board.{fmt}"
    assert main(["leaderboard", *map(str, results), "--format", fmt, "--output", str(output)]) == 0
    text = output.read_text()
    assert "det top 1" in text and "nsubj top 2" in text
    if fmt == "md":
        assert "Chosen vs matched random heads" in text and "p = (1 + count) / (1 + draws)" in text
        assert "p=" in text and ("5 draws" in text or "sets" in text) and "Holm: this board makes m = " in text
        assert "MDE (minimum detectable effect" in text and " nats (" in text and " points (" in text
    if fmt == "csv":  # effects get columns of their own names, not a head's accuracy columns
        header = text.splitlines()[0].split(",")
        assert "lm loss: chosen_effect" in header and "lm loss: chosen_p" in header
        assert "lm loss: chosen_p_holm" in header
        assert not any(name.endswith("_acc_pct") for name in header)


def test_a_result_file_without_the_block_gives_the_same_table(results, tmp_path):
    from probing.report.board import leaderboard_from_files
    from probing.report.renderers import render

    stripped = []
    for path in results:
        data = json.loads(path.read_text())
        data.pop("versus")
        stripped.append(tmp_path / path.name)
        stripped[-1].write_text(json.dumps(data))
    assert render(leaderboard_from_files(stripped), "md") == render(leaderboard_from_files(results), "md")


def test_an_ablation_that_is_no_chosen_run_is_refused_in_one_line(tmp_path, capsys):
    output = tmp_path / "each.json"
    assert main(["ablate", "--quiet", "--model", tiny_model("llama"), "--limit", "4", "--metric", "lm", "--bootstrap",
                 "5", "--each-layer", "--output", str(output)]) == 0
    capsys.readouterr()
    assert main(["leaderboard", str(output)]) == 2
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and "--chosen" in error


def test_blimp_overall_and_phenomena_columns(tmp_path):
    blimp = os.environ.get("PROBING_BLIMP")
    if not blimp:
        pytest.skip("real data: BLiMP is not available (set PROBING_BLIMP)")
    from probing.report.board import leaderboard_from_files

    (table,) = leaderboard_from_files(chosen_results(tmp_path, "llama", blimp)).tables
    assert table.relations[:2] == ["lm loss: chosen", "lm loss: random"]
    assert table.relations[2:4] == ["BLiMP overall: chosen", "BLiMP overall: random"]
    assert {"BLiMP island_effects: chosen", "BLiMP subject_verb_agreement: random"} <= set(table.relations)
    assert all("BLiMP" in row.treebank for row in table.rows)


def test_the_figure_of_a_chosen_run_is_a_png_of_the_effects_it_draws(results, tmp_path, capsys):
    import numpy as np

    from probing.analyses.ablation.versus import versus_effects
    from probing.results.io import read_result

    lm = next(path for path in results if "llama-lm" in path.name)
    figure = tmp_path / "versus.png"
    assert main(["plot", str(lm), "--output", str(figure)]) == 0
    assert figure.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and figure.stat().st_size > 10_000
    result = read_result(lm)
    drawn = versus_effects(result)["loss"]["det@2"]
    assert len(drawn["random"]) == result["versus"]["parts"]["loss"]["det@2"]["random"]["draws"]
    assert np.mean(drawn["random"]) == pytest.approx(result["versus"]["parts"]["loss"]["det@2"]["random"]["mean"])
    probe = next(path for path in results if "llama-probe" in path.name)
    assert main(["plot", str(probe), "--part", "det", "all", "--output", str(tmp_path / "probe.png")]) == 0
    assert (tmp_path / "probe.png").stat().st_size > 10_000
    capsys.readouterr()
    assert main(["plot", str(probe), "--part", "nope", "--output", str(tmp_path / "bad.png")]) == 2
    assert "--part" in capsys.readouterr().err and not (tmp_path / "bad.png").exists()


def test_the_boards_p_values_are_adjusted_together_by_holm(results):
    """m counts every chosen cell with a p-value on the board; each shows its raw and its adjusted p."""
    from probing.naming import p_value_text
    from probing.report.board import leaderboard_from_files
    from probing.stats.multiplicity import holm

    (table,) = leaderboard_from_files(results).tables
    cells = [row.cells[column] for row in table.rows for column in table.relations
             if column.endswith(": chosen") and row.cells.get(column) and row.cells[column].p_not_better is not None]
    assert len(cells) == 8 * 3  # 8 rows (2 models, 2 relations, k = 1, 2) x lm loss, probe own and all
    assert [cell.p_adjusted for cell in cells] == pytest.approx(holm([cell.p_not_better for cell in cells]))
    notes = " ".join(table.notes)
    assert f"this board makes m = {len(cells)} tests" in notes
    # at most 5 draws a row (fewer where a layer-matched space is smaller): the least raw p is 1 / (1 + draws),
    # the least adjusted m times that, clipped at 1; 0.05 takes 20 m - 1 draws
    drawn = [int(re.search(r"(\d+) (draws|sets)", row.cells[column].head).group(1)) for row in table.rows
             for column in table.relations if column.endswith(": random") and row.cells.get(column)]
    most = max(drawn)
    assert most <= 5
    assert (f"With at most {most} random draws a row, the least p a row can reach is 1 / (1 + {most}) = "
            f"{p_value_text(1 / (1 + most))}.") in notes
    assert ("the least any can reach is 1: no row of this board can be called significant, whatever its data; "
            f"that takes at least {20 * len(cells) - 1} draws a row.") in notes
    assert not any(cell.head.endswith(": significant") for cell in cells)
    for cell in cells:
        assert cell.p_not_better <= cell.p_adjusted <= 1
        assert cell.head.startswith(f"p={p_value_text(cell.p_not_better)}")
        assert f"Holm {p_value_text(cell.p_adjusted)}" in cell.head
        assert cell.head.endswith(": significant") == (cell.p_adjusted <= 0.05)


def test_the_committed_causal_board_still_reads_with_holm_and_its_mde():
    """Results written before exact enumeration and Holm (no exact, space nor distinct fields) make the board."""
    from conftest import REPO

    from probing.report.board import leaderboard_from_files

    folder = REPO / "leaderboards" / "versus" / "results"
    paths = sorted(path for path in folder.glob("*.json") if not path.name.endswith("-dev.json"))
    (table,) = leaderboard_from_files(paths).tables
    notes = " ".join(table.notes)
    tested = sum(1 for row in table.rows for column in table.relations
                 if column.endswith(": chosen") and row.cells.get(column) and row.cells[column].p_adjusted is not None)
    assert tested > 0 and f"m = {tested} tests" in notes and "nats" in notes.split("MDE")[1]


def test_every_committed_versus_block_is_the_one_its_conditions_give():
    """A --chosen result's versus block is derived data: when a rule changes (the permutation test's tie),
    make.sh derives it again from the result's own conditions and state. A committed block that differs from what
    this version derives is a board that quotes numbers the tool no longer gives."""
    from conftest import REPO

    from probing.analyses.ablation.versus import versus_disagreement
    from probing.results.io import read_result

    paths = sorted((REPO / "leaderboards").glob("versus*/results/*-k*.json"))
    assert paths
    stale = [f"{path.name}: {found}" for path in paths if (found := versus_disagreement(read_result(path)))]
    assert not stale, f"run SKIP_SCORING=1 bash leaderboards/make.sh to derive these again: {stale}"


def test_every_board_states_its_minimum_detectable_effect_per_measure():
    """The probe's, BLiMP's and the causal board's notes give the median half-width of their cells' 95% intervals,
    in points of accuracy (and nats of loss on the causal board); the random draws' spread is no estimate's."""
    from statistics import median

    from conftest import REPO

    from probing.report.board import leaderboard_from_files

    boards = REPO / "leaderboards"
    blimp = leaderboard_from_files(sorted((boards / "blimp" / "results").glob("*.json"))).tables[0]
    halves = [(cell.interval[1] - cell.interval[0]) / 2 for row in blimp.rows for cell in row.cells.values()
              if cell is not None and cell.interval]
    assert f"interval): {100 * median(halves):.1f} points ({len(halves)} cells)." in blimp.notes[-1]
    versus = leaderboard_from_files(sorted((boards / "versus" / "results").glob("gemma-3-270m-lm-*.json"))).tables[0]
    chosen = [row.cells["lm loss: chosen"].interval for row in versus.rows]
    assert f"loss {median((high - low) / 2 for low, high in chosen):.3f} nats ({len(chosen)} cells)" in versus.notes[-1]
