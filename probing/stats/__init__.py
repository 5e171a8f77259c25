"""Statistics on counts: bootstrap intervals, head and offset selection, the held-out runner's arithmetic.

No torch.
"""
