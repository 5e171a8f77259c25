"""Jensen-Shannon distances between heads and their map by behaviour (Clark et al. 2019, section 6).
"""
