"""Surface statistics of attention: [CLS], [SEP], punctuation, neighbours, entropy (Clark et al. 2019, section 3).
"""

from probing.plugins import Analysis, Command, register

register(Analysis(
    name="surface",
    accumulator="probing.analyses.surface.accumulator:SurfaceAccumulator",
    payload="probing.analyses.surface.payload:PAYLOAD",
    checks=("probing.analyses.surface.payload:check_surface",),
    extra={"page_section": "probing.analyses.surface.report:page_section"},
    commands=(
        Command("surface", "attention to [CLS], [SEP], punctuation, previous/next/self, and entropy, per head (Clark et al. sec. 3)",
                "probing.commands.surface", order=70, library="probing.analyses.surface.run:surface",
                figures="probing.analyses.surface.report:figures"),
    ),
))
