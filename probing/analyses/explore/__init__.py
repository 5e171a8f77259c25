"""What ``probing explore`` runs and shows: the probe, the no-op test and the sentence views of one pass, as one page.

- :mod:`.page_run`: the accumulators of the pass (the probe only without ``--result``), their results, the page,
  and each relation's chosen head drawn in the sentences kept.

It registers no analysis of its own: it saves the probe's and the no-op test's result files.
"""
