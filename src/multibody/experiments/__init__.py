"""Numerical experiments that reproduce a paper's comparison (e.g. :mod:`.reactions`: paper 003 Fig. 4)."""
