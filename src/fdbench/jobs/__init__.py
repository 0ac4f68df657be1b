"""The jobs of fdbench: ``benchmark`` (:mod:`.benchmark`) and the zoo (:mod:`.zoo`) run on
:mod:`fdbench.core.runner`, write their run folder through :mod:`.run_folder` and, for the
benchmark, its analysis files through :mod:`.report_inputs`; a benchmark's configuration is
validated against the training methods and planned in :mod:`.plan`.

Imports go one way: a job imports the stages (``training``, ``evaluation``, ``analysis``,
``report``, …) and no stage imports a job. This package imports nothing on its own, so importing
one job loads only what that job needs.
"""
