"""Surface statistics of attention: [CLS], [SEP], punctuation, neighbours, entropy (Clark et al. 2019, section 3).
"""

from probing.plugins import Analysis, register

register(Analysis(
    name="surface",
    accumulator="probing.analyses.surface.accumulator:SurfaceAccumulator",
    payload="probing.results.schema:PAYLOADS.surface",
    extra={"page_section": "probing.analyses.surface.report:page_section"},
))
