"""The "What was run" block names every protocol the page shows."""

from __future__ import annotations

import pandas as pd


def test_what_was_run_names_kims_protocol(tmp_path):
    from fdbench.report.builder import ReportContext, _Builder
    from fdbench.report.inputs import RunInputs
    from fdbench.report.sections.run import _run_section

    results = pd.DataFrame(
        {"dataset": ["d"], "study": ["iid"], "csf": ["MSR"], "metric": ["aurc"], "value": [0.1]}
    ).assign(protocol="failure_detection")
    summary = pd.DataFrame({"csf": ["MSR"], "value": [0.1]})
    body = _run_section(_Builder(tmp_path), ReportContext(RunInputs(results), None, summary))
    assert "failure_detection" in body and "Kim et al., 2023: the pooled study" in body
    plain = _run_section(_Builder(tmp_path), ReportContext(RunInputs(results)))
    assert "Kim et al." not in plain
