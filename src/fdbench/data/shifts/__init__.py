"""Shift construction: corruptions, sub-class and new-class splits, class-out-of-distribution
levels."""
