"""Confidence scoring functions computed from stored outputs, and their scaling."""
