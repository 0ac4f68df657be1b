"""``fdbench benchmark --list`` shows the embedded configs; a mistyped name offers the closest."""

from __future__ import annotations

import pytest

from tests._cli import run_cli


def test_list_shows_every_embedded_config():
    from fdbench.cli.benchmark import embedded_configs

    result = run_cli("benchmark", "--list")
    assert result.returncode == 0
    names = [line.split()[0] for line in result.stdout.splitlines()]
    assert names == list(embedded_configs())
    assert {"fashion_mnist", "unknown_detection_quick", "medical_embedded_quick"} <= set(names)


def test_a_mistyped_config_name_offers_the_closest(tmp_path):
    result = run_cli(
        "benchmark", "unknown_detecton_quick", "--out", str(tmp_path / "run"), cwd=tmp_path
    )
    assert result.returncode == 2
    assert "did you mean unknown_detection_quick" in result.stderr
    assert "--list" in result.stderr
    assert not (tmp_path / "run").exists()


def test_a_mistyped_builder_is_refused_before_out_is_written(tmp_path):
    from importlib.resources import files

    text = (files("fdbench") / "configs" / "fashion_mnist_quick.yaml").read_text()
    config = tmp_path / "typo.yaml"
    config.write_text(text.replace("fashion_mnist_experiments", "fashion_mnist_experimentz", 1))
    result = run_cli("benchmark", str(config), "--out", str(tmp_path / "run"))
    assert result.returncode == 2
    assert "did you mean 'fashion_mnist_experiments'" in result.stderr
    assert not (tmp_path / "run").exists()  # the corrected config may use the same folder


def test_a_mistyped_gallery_csf_is_refused_before_out_is_written(tmp_path):
    from importlib.resources import files

    text = (files("fdbench") / "configs" / "unknown_detection_quick.yaml").read_text()
    config = tmp_path / "typo.yaml"
    config.write_text(text.replace("gallery_csfs: [MSR]", "gallery_csfs: [MSRR]", 1))
    result = run_cli("benchmark", str(config), "--out", str(tmp_path / "run"))
    assert result.returncode == 2
    assert "analysis.gallery_csfs: 'MSRR' is no CSF fdbench knows; did you mean 'MSR'?" in (
        result.stderr
    )
    assert not (tmp_path / "run").exists()


def test_a_mistyped_method_kind_is_refused_before_out_is_written(tmp_path):
    from importlib.resources import files

    text = (files("fdbench") / "configs" / "unknown_detection_quick.yaml").read_text()
    config = tmp_path / "typo.yaml"
    config.write_text(text.replace("kind: crl", "kind: crll", 1))
    result = run_cli("benchmark", str(config), "--out", str(tmp_path / "run"))
    assert result.returncode == 2
    assert "got 'crll' (did you mean 'crl'?)" in result.stderr
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(
    ("typo", "message"),
    [
        (("ensembles: [ce]", "ensembles: [cee]"), "ensembles: 'cee' must name a method"),
        (("mc_methods: [ce]", "mc_methods: [cee]"), "inference.mc_methods: ['cee'] name no"),
        (("{base: ce, epochs: 2", "{base: cee, epochs: 2"), "method 'confidnet': base 'cee'"),
    ],
)
def test_a_mistyped_method_reference_is_refused_before_out_is_written(tmp_path, typo, message):
    from importlib.resources import files

    text = (files("fdbench") / "configs" / "medical_embedded_quick.yaml").read_text()
    assert typo[0] in text
    config = tmp_path / "typo.yaml"
    config.write_text(text.replace(*typo, 1))
    result = run_cli("benchmark", str(config), "--out", str(tmp_path / "run"))
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1
    assert message in result.stderr and "did you mean 'ce'?" in result.stderr
    assert not (tmp_path / "run").exists()


def test_a_mistyped_report_studies_pattern_is_refused_before_out_is_written(tmp_path):
    from importlib.resources import files

    text = (files("fdbench") / "configs" / "fashion_mnist_quick.yaml").read_text()
    assert "corruption/5]" in text and "quick: true}" in text
    config = tmp_path / "typo.yaml"  # tiny data: the studies are known once the data are built
    text = text.replace("quick: true}", "tiny: true}", 1)
    config.write_text(text.replace("corruption/5]", "corruptoin/5]", 1))
    result = run_cli("benchmark", str(config), "--out", str(tmp_path / "run"))
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1
    assert "analysis.report_studies: 'corruptoin/5' matches no study of the experiments" in (
        result.stderr
    )
    assert "did you mean 'corruption/5'?" in result.stderr
    assert not (tmp_path / "run").exists()  # the corrected config may use the same folder
