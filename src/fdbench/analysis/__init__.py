"""Aggregation over runs, rankings, bootstrap rank-then-aggregate and significance tests."""
