"""Failure labels per study and the filtering rules of each evaluation protocol."""
