"""Analyses of a model at a configuration (pure functions returning typed results):
mobility.py (rank, DOF, redundancy, singularity, admissible motions; paper 000) and partition.py
(coordinate partitioning and the projective criterion; paper 001)."""
from .mobility import Mobility, analyze, nearby_rank, rank_at
from .partition import (Criterion, Partition, admissible_partition, choose_independent, criterion,
                        geometric_choice, geometric_criterion, tangent_matrix)

__all__ = ["Mobility", "analyze", "nearby_rank", "rank_at", "Criterion", "Partition",
           "admissible_partition", "choose_independent", "criterion", "geometric_choice",
           "geometric_criterion", "tangent_matrix"]
