#!/usr/bin/env bash
# What a GPU adds to the boards, from one script (needs torch with CUDA, and the checkpoints in $PROBING_MODELS):
#
#   bash leaderboards/gpu.sh            # the device check, then the causal board's sized pieces for the decoders
#   DEVICE=cuda:1 bash leaderboards/gpu.sh
#
# 1. The device check (benchmarks/run.py --device cuda --quick: counts against the CPU's, float32 and bfloat16,
#    throughput and peak memory), its report written to benchmarks/gpu-report.md.
# 2. The causal board's sized pieces (leaderboards/make.sh, ONLY=versus VERSUS_SIZED=only): the decoders' k = 4 rows
#    with the draws the board's family needs. Of the board's primary cells, 14 can be made testable (the k = 1 cells
#    cannot: a band holds at most 35 sets of one head; the importance map answers them), so each needs
#    1 + draws >= 20 x 14: 279 draws (VERSUS_SIZED_DRAWS overrides), band-matched for gemma-3-270m, whose
#    layer-matched space holds 81 sets, layer-matched for SmolLM2-135M-Instruct (4,096). Twelve pieces,
#    results/MODEL-METRIC-REL-k4-sized.json in leaderboards/versus/ beside the CPU pieces, whose rows they replace on
#    the board; at the pace the CPU pieces ran, about 10 hours for SmolLM2 and 25 for gemma on two cores (the
#    board's notes). Each piece's time goes to leaderboards/piece-times.tsv with the GPU's name; like every grid of
#    make.sh it resumes where it stopped when called again. The CPU pieces are not run again (VERSUS_SIZED=only).
# 3. The tables and figures of every board (make.sh with SKIP_SCORING).
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
python="${PYTHON:-python3}"
export DEVICE="${DEVICE:-cuda}"
"$python" -c "import sys, torch; torch.cuda.is_available() or sys.exit('gpu.sh: torch sees no CUDA device')"

if [ -z "${SKIP_CHECK:-}" ]; then
  "$python" benchmarks/run.py --device "$DEVICE" --quick --output benchmarks/gpu-report.md
fi
VERSUS_SIZED=only ONLY=versus SKIP_TABLES=1 bash leaderboards/make.sh
SKIP_SCORING=1 bash leaderboards/make.sh
