#!/usr/bin/env bash
# What a GPU adds to the boards, from one script (needs torch with CUDA, and the checkpoints in $PROBING_MODELS):
#
#   bash leaderboards/gpu.sh            # the device check, then the causal pieces a CPU cannot finish (2-4 below)
#   DEVICE=cuda:1 bash leaderboards/gpu.sh
#   GPU_FAMILIES=agreement AGREEMENT_LANGUAGES=de SKIP_CHECK=1 SKIP_TABLES=1 bash leaderboards/gpu.sh  # one call's worth
#
# 1. The device check (benchmarks/run.py --device cuda --quick: counts against the CPU's, float32 and bfloat16,
#    throughput and peak memory), its report written to benchmarks/gpu-report.md (SKIP_CHECK=1: not).
# 2. The causal board's sized pieces (leaderboards/make.sh, ONLY=versus VERSUS_SIZED=only): the decoders' k = 4 rows
#    with the draws the board's family needs. Of the board's primary cells, 14 can be made testable (the k = 1 cells
#    cannot: a band holds at most 35 sets of one head; the importance map answers them), so each needs
#    1 + draws >= 20 x 14: 279 draws (VERSUS_SIZED_DRAWS overrides), band-matched for gemma-3-270m, whose
#    layer-matched space holds 81 sets, layer-matched for SmolLM2-135M-Instruct (4,096). Twelve pieces,
#    results/MODEL-METRIC-REL-k4-sized.json in leaderboards/versus/ beside the CPU pieces, whose rows they replace on
#    the board; at the pace the CPU pieces ran, about 10 hours for SmolLM2 and 25 for gemma on two cores (the
#    board's notes). The CPU pieces are not run again (VERSUS_SIZED=only).
# 3. The agreement family's causal pieces (make.sh, ONLY=agreement AGREEMENT_CAUSAL=only), as make.sh declares them:
#    per language and pair set, gemma-3-270m's nsubj heads at k = 1 and 4 against AGREEMENT_RANDOM (100) matched
#    random sets, and every head alone (--each-head), on the first AGREEMENT_LIMIT (100) pairs of each curated
#    paradigm and every pair made from a treebank's held-out half. They choose on the DEV results a CPU grid made
#    (minutes: ONLY=agreement AGREEMENT_CAUSAL= bash leaderboards/make.sh); a language without one is left out, and
#    says so. The intact accuracies are not run again. A causal piece made on either device is done for the other
#    (make.sh's --any-device), so a CPU grid does not redo what the GPU made. Each piece is one probing ablate run of
#    at most 102 conditions (k = 4: the intact model, the chosen set, up to 100 random sets) or 73 (every head
#    alone) over at most 1,900 pairs (RuBLiMP's 19 paradigms x 100), so at most 193,800 pair scorings; it fits a
#    10-minute call at about 340 pairs a second, some 54 times what two CPU cores score (leaderboards/README.md,
#    "What runs where"). AGREEMENT_LANGUAGES picks rows of the grid, so that one call runs a few pieces.
# 4. The importance maps' pieces (make.sh, ONLY=importance): every head disabled alone (ablate --each-head) for
#    gemma-3-270m and SmolLM2-135M-Instruct on the LM loss, the probe and BLiMP's agreement paradigms, the rows of
#    causal.md's map that a CPU grid would take days over (SmolLM2: 271 conditions a unit). Made on either device,
#    a map's piece is done for the other (--any-device); those already made (MiniLM's) are not run again.
# 5. The tables and figures of every board (make.sh with SKIP_SCORING; SKIP_TABLES=1: not).
#
# GPU_FAMILIES (default: versus agreement importance) says which of 2, 3 and 4 run. Each piece's time goes to
# leaderboards/piece-times.tsv with the GPU's name; like every grid of make.sh it resumes where it stopped when called
# again, and a piece cut short resumes from its checkpoint in $GRID_STATE (GRID_STATE=.cache/grid keeps it in the
# working tree, ignored by git, for a machine that keeps only that).
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
python="${PYTHON:-python3}"
export DEVICE="${DEVICE:-cuda}"
"$python" -c "import sys, torch; torch.cuda.is_available() or sys.exit('gpu.sh: torch sees no CUDA device')"

if [ -z "${SKIP_CHECK:-}" ]; then
  "$python" benchmarks/run.py --device "$DEVICE" --quick --output benchmarks/gpu-report.md
fi
families=" ${GPU_FAMILIES:-versus agreement importance} "
if [[ "$families" == *" versus "* ]]; then
  VERSUS_SIZED=only ONLY=versus SKIP_TABLES=1 bash leaderboards/make.sh
fi
if [[ "$families" == *" agreement "* ]]; then
  AGREEMENT_CAUSAL=only ONLY=agreement SKIP_TABLES=1 bash leaderboards/make.sh
fi
if [[ "$families" == *" importance "* ]]; then
  ONLY=importance SKIP_TABLES=1 bash leaderboards/make.sh
fi
[ -n "${SKIP_TABLES:-}" ] || SKIP_SCORING=1 bash leaderboards/make.sh
