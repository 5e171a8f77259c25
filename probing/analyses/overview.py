"""The passes over an input that the surface, heads and gradients commands (and the report) make.

One attention pass feeds the surface statistics and, when asked, the head
divergences; the gradient pass runs the masked-LM model separately. Each
function returns a result object (provenance first, spec/results.md style)
ready for :func:`probing.results.write_result`.

>>> from probing.testing import tiny_bert, sample_path
>>> from probing.extraction import load_model
>>> loaded = load_model(tiny_bert())
>>> source = AnalysisInput.open(str(sample_path()), limit=4)
>>> surface, divergence = attention_pass(loaded, source, divergence=True)
>>> result = heads_result(loaded, source, surface, divergence, {"seed": 0})
>>> len(result["heads"]["mds"]), result["input"]["units_used"]
(8, 4)
"""

from __future__ import annotations

from dataclasses import dataclass

from tqdm.auto import tqdm

from ..extraction import LoadedModel
from .clustering import HeadDivergence, behaviour_rules, behaviours, embed, probe_marks
from .gradients import MASK_RATE, accumulate
from .streams import AnalysisInput, attention_batches, provenance, special_token_names
from .surface import SurfaceStats, TokenRoles


@dataclass(frozen=True)
class PassOptions:
    """How batches are made; written into every result's ``config``."""

    batch_size: int = 32
    max_length: int | None = None
    progress: bool = False

    def as_dict(self) -> dict:
        return {"batch_size": self.batch_size, "max_length": self.max_length}


def attention_pass(
    loaded: LoadedModel, source: AnalysisInput, *, divergence: bool = False, options: PassOptions = PassOptions()
) -> tuple[SurfaceStats, HeadDivergence | None]:
    """Surface statistics (and head divergences) over every batch of ``source``."""
    surface = SurfaceStats(loaded.num_layers, loaded.num_heads)
    heads = HeadDivergence(loaded.num_layers, loaded.num_heads) if divergence else None
    for batch, attention in attention_batches(
        loaded, source, batch_size=options.batch_size, max_length=options.max_length, progress=options.progress
    ):
        roles = TokenRoles.of_batch(batch)
        surface.update(attention, roles, causal=loaded.is_causal)
        if heads is not None:
            heads.update(attention, roles.real)
        del attention  # the largest tensor of the pass; free it before the next batch
    return surface, heads


def _common(analysis: str, loaded: LoadedModel, source: AnalysisInput, config: dict) -> dict:
    result = provenance(analysis, loaded, source, {"pairs": source.pairs, "limit": source.limit, **config})
    result["token_names"] = special_token_names(loaded)
    return result


def surface_result(loaded: LoadedModel, source: AnalysisInput, surface: SurfaceStats, config: dict) -> dict:
    result = _common("surface", loaded, source, config)
    result["surface"] = surface.result()
    return result


def heads_result(
    loaded: LoadedModel,
    source: AnalysisInput,
    surface: SurfaceStats,
    divergence: HeadDivergence,
    config: dict,
    *,
    probe: dict | None = None,
    probe_path: str | None = None,
) -> dict:
    """Divergences, MDS coordinates, behaviour labels and (optionally) the probe's best heads."""
    result = _common("heads", loaded, source, config)
    result["surface"] = surface.result()
    matrix = divergence.matrix()
    result["heads"] = {
        "divergence": divergence.result(),
        "mds": [[round(float(v), 6) for v in row] for row in embed(matrix, seed=config.get("seed", 0))],
        "mds_of": "sqrt of the mean Jensen-Shannon divergence (the Jensen-Shannon distance)",
        "behaviour": behaviours(result["surface"]),
        "behaviour_rules": behaviour_rules(),
        "probe": probe_path,
        "probe_marks": probe_marks(probe, loaded.num_layers, loaded.num_heads) if probe is not None else [],
    }
    return result


def gradient_result(loaded_mlm: LoadedModel, source: AnalysisInput, config: dict, options: PassOptions = PassOptions()) -> dict:
    """Gradient importance over ``source`` (``config`` holds ``seed`` and ``mask_rate``)."""
    from ..alignment import maximum_length

    limit = maximum_length(loaded_mlm.tokenizer, loaded_mlm.model.config, options.max_length)
    batches = source.batches(loaded_mlm.tokenizer, batch_size=options.batch_size, max_length=limit)
    batches = tqdm(batches, unit="batch", disable=not options.progress, leave=False, desc="gradients")
    stats = accumulate(loaded_mlm, batches, seed=config.get("seed", 0), rate=config.get("mask_rate", MASK_RATE))
    result = _common("gradients", loaded_mlm, source, config)
    result["gradients"] = stats.result()
    return result
