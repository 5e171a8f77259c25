#!/usr/bin/env bash
# Regenerate the explore figures under docs/figures/ and the numbers of docs/explore.md:
#
#   bash docs/make_figures.sh                         # all-MiniLM-L6-v2 and all-mpnet-base-v2, en_ewt dev
#   MODELS=minilm LIMIT=300 bash docs/make_figures.sh # one model, the first 300 sentences
#
# For each model: `probing explore` on en_ewt dev (the probe, the no-op test and the sentence views in one
# pass) writes the page, the views and the result files into $BUILD (default: build/explore, not committed);
# the no-op table it prints is the one docs/explore.md quotes. Then headless Chromium takes a 1280 px wide
# screenshot of the page (docs/figures/explore-NAME.png), which opens on the chosen det head, and the
# det head's exported sentence views are copied to docs/figures/views-NAME-det.png.
# Checkpoints come from ../shared/models/get-model and treebanks from ../shared/treebanks (relative to the
# repository root), so no network is needed once get-model has run. Needs Debian's chromium.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
shared="${PROBING_SHARED:-../shared}"
export PROBING_TREEBANKS="${PROBING_TREEBANKS:-$shared/treebanks}"
python="${PYTHON:-python3}"
build="${BUILD:-build/explore}"
models="${MODELS:-minilm mpnet}"
limit=()
if [ -n "${LIMIT:-}" ]; then limit=(--limit "$LIMIT"); fi
mkdir -p "$build" docs/figures

for short in $models; do
  path="$("$shared/models/get-model" "$short")"
  name="$(basename "$path")"
  echo "exploring $name on en_ewt dev" >&2
  # det first: the page opens on the first relation's chosen head
  "$python" -m probing explore --model "$path" --treebank en_ewt:dev "${limit[@]}" --seed 0 \
    --relations det dobj pobj poss all --output "$build/$name.html" --views "$build/$name-views" \
    --save-results "$build/$name" --quiet | tee "$build/$name-noop.txt"
  profile="$(mktemp -d)"
  chromium --headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update \
    --disable-sync --no-first-run --user-data-dir="$profile" --hide-scrollbars --window-size=1280,2100 \
    --screenshot="docs/figures/explore-$name.png" "file://$repo/$build/$name.html" 2>/dev/null
  rm -rf "$profile"
  cp "$(ls "$build/$name-views"/det-*.png | head -n 1)" "docs/figures/views-$name-det.png"
done
echo "figures: $(ls docs/figures/explore-*.png docs/figures/views-*-det.png | tr '\n' ' ')" >&2
