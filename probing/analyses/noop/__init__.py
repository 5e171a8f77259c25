"""The no-op test: do heads park attention on [SEP] when their relation is absent (Clark et al. 2019, section 3).
"""

from probing.plugins import Analysis, register

register(Analysis(
    name="noop",
    accumulator="probing.analyses.noop.accumulator:NoopAccumulator",
    payload="probing.analyses.noop.payload:PAYLOAD",
    checks=("probing.analyses.noop.payload:groups_add_up",),
    tables="probing.analyses.noop.report:leaderboard_tables",
    extra={"chosen_heads": "probing.analyses.noop.report:chosen_heads",  # the explore page outlines them
           "page_section": "probing.analyses.noop.report:page_section"},
))
