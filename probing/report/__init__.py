"""Tables, leaderboards, figures and pages made from result files (no torch, and no analysis imported).

- :mod:`.board`: the table data model (Cell, Row, Table, Leaderboard), the one ranking rule, and the
  leaderboard of any results, whose tables each analysis makes (found through :mod:`probing.plugins`);
- :mod:`.renderers`: a leaderboard in md, csv, json, latex and html, one module each;
- :mod:`.escaping`: one escaping function per output format, used by every writer of that format;
- :mod:`.page`: the explore page; ``assets/``: its and the leaderboard's style sheets and scripts;
- :mod:`.drawing` and :mod:`.figures`: what every figure shares, and the figures of surface, heads and
  gradient results.
"""
