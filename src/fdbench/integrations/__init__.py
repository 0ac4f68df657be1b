"""Adapters to other tools (torchmetrics, Lightning, scikit-learn); each submodule imports its
tool only when it is itself imported.

- :mod:`fdbench.integrations.torchmetrics`: ``torchmetrics.Metric`` classes computing
  ``fdbench.metrics`` over states gathered across batches and processes.
- :mod:`fdbench.integrations.lightning`: ``FailureDetectionCallback``, the failure-detection
  suite logged at every validation epoch and the outputs store of the best epoch.
- :mod:`fdbench.integrations.sklearn`: ``RiskCoverageDisplay``, ``GeneralizedRiskDisplay`` and
  AURC/AUGRC scorers for ``GridSearchCV``.

Importing this package imports none of those tools.
"""
