"""Seeing a run (issue 15): animations of the mechanism (:mod:`.animation`; planar bodies, chains and
spatial director frames) and one self-contained offline HTML report (:mod:`.page`: summary, interactive
plotly figures, events table, the animation). Nothing here computes physics: it reads a Result through
its public API and draws the model that produced it (:mod:`.source`)."""
