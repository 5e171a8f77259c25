#!/usr/bin/env bash
# What a GPU adds to the boards, from one script (needs torch with CUDA, and the checkpoints in $PROBING_MODELS):
#
#   bash leaderboards/gpu.sh            # the device check, then the causal board at k = 1, 4, 8 and 2,000 draws
#   DEVICE=cuda:1 bash leaderboards/gpu.sh
#
# 1. The device check (benchmarks/run.py --device cuda --quick: counts against the CPU's, float32 and bfloat16,
#    throughput and peak memory), its report written to benchmarks/gpu-report.md.
# 2. The causal board's grid (leaderboards/make.sh, ONLY=versus) on the GPU with the sizes two CPU cores cannot
#    afford: k = 1, 4 and 8, and 2,000 matched random draws a row (VERSUS_K and VERSUS_RANDOM override), its pieces
#    in leaderboards/versus-gpu/ beside the CPU board's, each piece's time in leaderboards/piece-times.tsv with the
#    GPU's name. Like every grid of make.sh it resumes where it stopped when called again. Why 2,000: that board
#    makes m = 84 tests (3 models, 2 relations, 3 k, and each metric's parts), and Holm lets a row be significant
#    only when 1 + draws >= 20 m (1,679); at 1,000 draws its least adjusted p would be 0.084.
# 3. The tables and figures of every board, the GPU's included (make.sh with SKIP_SCORING).
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
python="${PYTHON:-python3}"
export DEVICE="${DEVICE:-cuda}"
"$python" -c "import sys, torch; torch.cuda.is_available() or sys.exit('gpu.sh: torch sees no CUDA device')"

if [ -z "${SKIP_CHECK:-}" ]; then
  "$python" benchmarks/run.py --device "$DEVICE" --quick --output benchmarks/gpu-report.md
fi
draws="${VERSUS_RANDOM:-2000}"
VERSUS_DIR=leaderboards/versus-gpu VERSUS_K="${VERSUS_K:-1 4 8}" VERSUS_RANDOM="$draws" VERSUS_RANDOM_ENCODERS="$draws" \
  ONLY=versus SKIP_TABLES=1 bash leaderboards/make.sh
SKIP_SCORING=1 bash leaderboards/make.sh
