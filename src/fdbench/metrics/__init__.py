"""Metrics of failure detection: risk-coverage curves, AURC/AUGRC, ranking, calibration."""
