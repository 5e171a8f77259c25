"""Surface statistics of attention: [CLS], [SEP], punctuation, neighbours, entropy (Clark et al. 2019, section 3).
"""
