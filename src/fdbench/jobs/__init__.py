"""The jobs of fdbench and what they share: ``benchmark``, ``evaluate`` and the zoo's entry
(:mod:`fdbench.zoo.job`) run on :mod:`~fdbench.jobs.runner`, write their run folder through
:mod:`~fdbench.jobs.run_folder` and, for the benchmark, its analysis files through
:mod:`~fdbench.jobs.report_inputs`.

Imports go one way: a job imports the shared modules (``runner``, ``run_folder``, ``plan``,
``report_inputs``) and the stages (``training``, ``csf``, ``metrics``, ``report``, …), never the
other way round; the stages reach the runner only lazily (the bootstrap's local cluster). This
package imports nothing on its own, so importing one job loads only what that job needs.
"""
