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


def test_one_row_per_model_relation_and_k_with_chosen_random_and_threshold_columns(results, capsys):
    from probing.report.board import cell_text, leaderboard_from_files

    capsys.readouterr()
    (table,) = leaderboard_from_files(results).tables
    assert table.key == "versus" and table.relations == [
        "lm loss: chosen", "lm loss: random", "lm loss: threshold", "probe: own relation: chosen",
        "probe: own relation: random", "probe: own relation: threshold", "probe: all: chosen", "probe: all: random"]
    models = [row.model for row in table.rows]
    assert len(models) == 8 and any("det top 1" in m for m in models) and any("nsubj top 2" in m for m in models)
    row = next(row for row in table.rows if row.model.endswith("det top 2"))
    versus = json.loads(next(path for path in results if "llama-lm" in path.name).read_text())["versus"]
    entry = versus["parts"]["loss"]["det@2"]
    if row.model.startswith("llama"):
        assert row.cells["lm loss: chosen"].accuracy == entry["chosen"]["effect"]
        assert row.cells["lm loss: chosen"].se == entry["chosen"]["se"] and entry["chosen"]["se"] > 0
        assert row.cells["lm loss: random"].interval == entry["random"]["percentiles"]
    assert row.cells["lm loss: chosen"].scale == "nats" and row.cells["probe: all: chosen"].scale == "points"
    random = entry["random"]
    drawn = f"all {random['draws']} sets of the layer-matched space" if entry["exact"] else "5 draws, layer-matched"
    assert row.cells["lm loss: random"].head.startswith(drawn) and entry["exact"] == (entry["space"] <= 5)
    # an estimate's interval reads [a, b]; the spread of the draws never does
    chosen, spread = cell_text(row.cells["lm loss: chosen"]), cell_text(row.cells["lm loss: random"])
    assert re.search(r"^[+-]\d\.\d{3} \[[+-]\d\.\d{3}, [+-]\d\.\d{3}\] p=", chosen), chosen
    assert re.search(r"draws 2\.5-97\.5%: [+-]\d\.\d{3} to [+-]\d\.\d{3}", spread) and "[" not in spread, spread
    # at most 5 draws a row: no primary cell can reach 0.05 / m', the probe on all is exploratory, nothing is tested
    assert "untestable at this size (least p " in row.cells["lm loss: chosen"].head
    assert row.cells["probe: all: chosen"].head.endswith(", exploratory")
    assert cell_text(row.cells["lm loss: threshold"]) == "unreachable" and "probe: all: threshold" not in row.cells
    assert not any("Holm" in cell.head for row in table.rows for cell in row.cells.values() if cell)


@pytest.mark.parametrize("fmt", ["md", "csv", "json", "latex", "html"])
def test_the_table_renders_in_every_format(results, fmt, tmp_path, capsys):
    output = tmp_path / f"board.{fmt}"
    assert main(["leaderboard", *map(str, results), "--format", fmt, "--output", str(output)]) == 0
    text = output.read_text()
    assert "det top 1" in text and "nsubj top 2" in text
    if fmt == "md":
        assert "Chosen vs matched random heads" in text and "p = (1 + count) / (1 + draws)" in text
        assert "p=" in text and ("5 draws" in text or "sets" in text) and "Family: one primary cell per row" in text
        assert "Half-width of the 95% intervals" in text and " nats (" in text and " points (" in text
        assert "Minimum detectable effect against 0 (80% power" in text and "MDE (" not in text
        assert "draws 2.5-97.5%: " in text and "Untestable at this size: 16 primary cells" in text
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

    paths = chosen_results(tmp_path, "llama", blimp)
    (table,) = leaderboard_from_files(paths).tables
    assert table.relations[:3] == ["lm loss: chosen", "lm loss: random", "lm loss: threshold"]
    assert table.relations[3:6] == ["BLiMP overall: chosen", "BLiMP overall: random", "BLiMP overall: threshold"]
    assert {"BLiMP island_effects: chosen", "BLiMP subject_verb_agreement: random"} <= set(table.relations)
    assert "BLiMP island_effects: threshold" not in table.relations  # a phenomenon is no primary cell
    # every row scored on minimal pairs names the token each sentence was scored after, as the run recorded it
    metric = json.loads(next(path for path in paths if "minimal-pairs" in path.name).read_text())["metric"]
    assert metric["context"] == "bos" and metric["context_token"]
    assert all(f"each sentence after {metric['context_token']}" in row.treebank for row in table.rows)


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


def test_the_boards_family_leaves_out_what_its_draws_cannot_test(results):
    """The family: one primary cell per row and metric (lm loss, probe on the row's own relation); at most 5 draws
    a row, none can reach 0.05 / m', so Tarone's rule leaves all 16 out and each says its least p; the probe on
    all is exploratory; no note claims a reach a row does not have."""
    from probing.naming import p_value_text
    from probing.report.board import leaderboard_from_files

    (table,) = leaderboard_from_files(results).tables
    notes = " ".join(table.notes)
    primary = [(row, column) for row in table.rows for column in ("lm loss: chosen", "probe: own relation: chosen")]
    assert len(primary) == 16
    for row, column in primary:
        cell, random = row.cells[column], row.cells[column.replace("chosen", "random")]
        draws = int(re.search(r"(\d+) (draws|sets)", random.head).group(1))
        assert draws <= 5 and cell.p_adjusted is None
        assert cell.head.endswith(f"untestable at this size (least p {p_value_text(1 / (1 + draws))})"), cell.head
    assert all(row.cells["probe: all: chosen"].head.endswith("exploratory") for row in table.rows)
    assert "16 with a p. Tarone's rule: m' = 1" in notes
    assert "No cell is left to test: nothing on this board can be called significant" in notes
    assert "the least any can reach" not in notes


def test_the_committed_causal_board_states_its_family_thresholds_and_untestable_rows():
    """Results written before exact enumeration and Holm (no exact, space nor distinct fields) make the board; every
    tested cell has a threshold its own draws give, every untestable one is listed with its least p."""
    from conftest import REPO

    from probing.report.board import leaderboard_from_files
    from probing.stats.multiplicity import reaches

    folder = REPO / "leaderboards" / "versus" / "results"
    paths = sorted(path for path in folder.glob("*-k*.json"))
    (table,) = leaderboard_from_files(paths).tables
    notes = " ".join(table.notes)
    tested = [(row, column) for row in table.rows for column in table.relations
              if column.endswith(": chosen") and row.cells.get(column) and row.cells[column].p_adjusted is not None]
    m = int(re.search(r"Holm adjusts the m = (\d+) cells", notes).group(1))
    m_prime = int(re.search(r"Tarone's rule: m' = (\d+)", notes).group(1))
    assert 0 < len(tested) == m <= m_prime and "Untestable at this size:" in notes
    for row, column in tested:
        draws = int(re.search(r"([\d,]+) (draws|sets)", row.cells[column.replace("chosen", "random")].head)
                    .group(1).replace(",", ""))
        assert reaches(draws, m_prime) and row.cells[column.replace("chosen", "threshold")].accuracy is not None
    assert "the least any can reach" not in notes and "MDE (" not in notes


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


def test_every_board_states_its_half_widths_per_measure_and_the_causal_board_its_detectable_effect():
    """The probe's, BLiMP's and the causal board's notes give the median half-width of their cells' 95% intervals,
    called that, in points of accuracy (and nats of loss on the causal board), per measure; the causal board, whose
    effects carry their paired bootstrap standard error, also 2.80 times its median per measure. The random draws'
    spread is no estimate's and is left out."""
    from statistics import median

    from conftest import REPO

    from probing.report.board import leaderboard_from_files

    boards = REPO / "leaderboards"
    blimp = leaderboard_from_files(sorted((boards / "blimp" / "results").glob("*.json"))).tables[0]
    halves = [(cell.interval[1] - cell.interval[0]) / 2 for row in blimp.rows for cell in row.cells.values()
              if cell is not None and cell.interval]
    assert f"interval that holds 0): {100 * median(halves):.1f} points ({len(halves)} cells)." in blimp.notes[-1]
    versus = leaderboard_from_files(sorted((boards / "versus" / "results").glob("gemma-3-270m-*-k*.json"))).tables[0]
    chosen = [row.cells["lm loss: chosen"] for row in versus.rows]
    assert f"lm loss {median((c.interval[1] - c.interval[0]) / 2 for c in chosen):.3f} nats ({len(chosen)} cells)" \
        in versus.notes[-1]
    assert f"lm loss {median(2.80 * c.se for c in chosen):.3f} nats ({len(chosen)} cells)" in versus.notes[-1]
    own = [row.cells["probe: own relation: chosen"] for row in versus.rows]
    assert f"probe: own relation {100 * median(2.80 * c.se for c in own):.1f} points ({len(own)} cells)" \
        in versus.notes[-1].split("Minimum detectable effect")[1]


def test_a_note_of_ones_own_joins_the_boards_notes_and_a_bad_one_is_refused_in_one_line(results, tmp_path, capsys):
    output = tmp_path / "board.md"
    note = "Where the missing draws are made: on a GPU."
    assert main(["leaderboard", *map(str, results), "--note", note, "--output", str(output)]) == 0
    assert output.read_text().rstrip().endswith(f"- {note}")
    capsys.readouterr()
    for bad in ("", "two\nlines"):
        assert main(["leaderboard", *map(str, results), "--note", bad, "--output", str(tmp_path / "bad.md")]) == 2
        error = capsys.readouterr().err.strip()
        assert len(error.splitlines()) == 1 and "--note" in error and not (tmp_path / "bad.md").exists()
