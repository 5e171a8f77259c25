"""How much the language-model loss depends on attention to [SEP] and the sink (Clark et al. 2019, Figure 3).
"""
