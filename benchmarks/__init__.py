"""The benchmarks of probing: how fast it is against the work it cannot avoid, and checks against independent code.

A package, run from the repository's root::

    python -m benchmarks.run                  # the quick look (benchmarks/run.py's docstring lists the rest)
    python -m benchmarks.heavy --output benchmarks/RESULTS.md   # the ablation grid and minimal pairs

``python benchmarks/run.py ...`` does the same as ``python -m benchmarks.run ...``. Nothing here is part of the
installed package; minicons, which one measurement compares against, is the ``bench`` extra.
"""
