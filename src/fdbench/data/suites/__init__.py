"""The data sets of each paper fdbench reproduces, one module per suite."""
