"""Tables, leaderboards, figures and pages made from result files.

No torch.
"""
