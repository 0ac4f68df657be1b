"""The report page in headless Chromium: contents links resolve, every image loads, the page
stays light, a CSF keeps one colour across figures, no red-green colour scale."""

from __future__ import annotations

import json
import os
import re

import pytest

from fdbench.report.palette import HEAT_COLORMAP, csf_colour

from .test_browser import _render

# Appended to a copy of the page only: which contents links point nowhere, which images did not
# decode, the colours each figure records, and the classes and computed background of every
# table cell with a class or a background.
PROBE = (
    '<script>window.addEventListener("load", () => {'
    "const links = [...document.querySelectorAll('nav.toc a')].map(a => a.getAttribute('href'));"
    "const dangling = links.filter(h => !h.startsWith('#')"
    " || !document.getElementById(h.slice(1)));"
    "const broken = [...document.images].filter(i => !i.complete || i.naturalWidth === 0)"
    ".map(i => i.id);"
    "const colours = {}; for (const i of document.querySelectorAll('img[data-colours]'))"
    " colours[i.dataset.reportFigure] = JSON.parse(i.dataset.colours);"
    "const heat = [...document.querySelectorAll('td')].filter(td => td.className"
    " || getComputedStyle(td).backgroundColor !== 'rgba(0, 0, 0, 0)')"
    ".map(td => [td.className, getComputedStyle(td).backgroundColor]);"
    "const out = {links: links.length, dangling, broken, images: document.images.length,"
    " colours, heat};"
    'document.body.setAttribute("data-probe", JSON.stringify(out));});</script>'
)
MAX_PAGE_BYTES = 5 * 1024 * 1024
"""The bound of issue #24 for the --quick benchmark's page; this page is far smaller."""
MAX_BYTES_PER_FIGURE = 160 * 1024


@pytest.fixture(scope="module")
def probed(full_report, tmp_path_factory):
    if os.environ.get("CI") == "true":
        from fdbench.report.browser import find_browser

        assert find_browser() is not None, "CI must have Chromium (scripts/setup.sh installs it)"
    _, page, manifest = full_report
    copy = tmp_path_factory.mktemp("probe") / "report.html"
    copy.write_text(page.read_text(encoding="utf-8").replace("</body>", PROBE + "</body>"))
    dom, console = _render(copy, tmp_path_factory.mktemp("profile"))
    assert console == []
    return json.loads(dom.body["data-probe"]), page, manifest


def test_contents_links_resolve(probed):
    probe, _, manifest = probed
    assert probe["dangling"] == []
    # one entry per section and per collapsed dataset × method block
    assert probe["links"] == len(manifest["sections"]) + len(manifest["subsections"])
    assert manifest["sections"][0] == "run"


def test_every_image_loads(probed):
    probe, _, manifest = probed
    assert probe["broken"] == []
    assert probe["images"] == len(manifest["figures"]) > 0


def test_page_weight_is_bounded(probed):
    _, page, manifest = probed
    size = page.stat().st_size
    assert size < MAX_PAGE_BYTES
    assert size / len(manifest["figures"]) < MAX_BYTES_PER_FIGURE


def test_a_csf_has_one_colour_in_every_figure(probed):
    probe, _, manifest = probed
    colours = probe["colours"]
    assert colours == manifest["figure_colours"]
    with_msr = [name for name, drawn in colours.items() if "MSR" in drawn]
    # the curves of both methods (ce, dg) draw the MSR baseline
    assert len(with_msr) >= 2
    assert {colours[name]["MSR"] for name in with_msr} == {csf_colour("MSR")}
    for drawn in colours.values():
        assert all(colour == csf_colour(csf) for csf, colour in drawn.items())
        assert len(set(drawn.values())) == len(drawn), "two CSFs of one figure share a colour"


def _rgb(css: str) -> tuple[int, int, int]:
    match = re.fullmatch(r"rgb\((\d+), (\d+), (\d+)\)", css.strip())
    assert match, css
    return tuple(int(v) for v in match.groups())


def test_no_red_green_colour_scale(probed):
    probe, _, manifest = probed
    assert manifest["colormaps"]["heat"] == HEAT_COLORMAP in {"cividis", "viridis"}
    heat = []
    for classes, css in probe["heat"]:
        named = re.findall(r"\bh([0-9a-f]{6})\b", classes)
        if not named:
            assert css == "rgba(0, 0, 0, 0)", f"a background without a heat class: {classes}"
            continue
        # the colour the class names is the one drawn
        (hexa,) = named
        assert _rgb(css) == tuple(int(hexa[k : k + 2], 16) for k in (0, 2, 4)), (classes, css)
        heat.append(css)
    assert heat, "the page has heat-mapped cells"
    for css in heat:
        r, g, b = _rgb(css)
        assert not (r > g + 40 and r > b + 40), f"a red cell: {css}"
        assert not (g > r + 40 and g > b + 40), f"a green cell: {css}"


def test_the_fixed_colours_are_distinct_and_deterministic():
    core = ["MSR", "MLS", "PE", "energy", "DOCTOR", "TEMP-MLS", "MCD-MSR", "MCD-PE", "DG-Res"]
    assert len({csf_colour(c) for c in core}) == len(core)
    assert csf_colour("my own score") == csf_colour("my own score")
    with pytest.raises(TypeError, match="name"):
        csf_colour(3)


# Appended to a copy of the page only: after loading, follow the contents link of one block
# (a same-document navigation) and record whether its <details> is open afterwards.
CLICK = (
    '<script>window.addEventListener("load", () => {{'
    "document.querySelector('nav.toc a[href=\"#{anchor}\"]').click();"
    "setTimeout(() => document.body.setAttribute('data-clicked',"
    " document.getElementById('{anchor}').closest('details').open), 50);}});</script>"
)


def test_a_contents_link_opens_its_collapsed_block(full_report, tmp_path):
    _, page, manifest = full_report
    text = page.read_text(encoding="utf-8")
    assert "<details open" not in text, "every block is written closed"
    blocks = manifest["subsections"]
    target, clicked = blocks[-1], blocks[0]
    copy = tmp_path / "report.html"
    copy.write_text(text.replace("</body>", CLICK.format(anchor=clicked) + "</body>"))
    dom, console = _render(copy, tmp_path / "profile", fragment=target)
    assert console == []
    assert set(blocks) <= set(dom.opened), "every block's anchor lies inside its <details>"
    # loaded at report.html#<target>: the navigation opened the block holding the target
    assert dom.opened[target] is True
    # followed from the contents: opened too
    assert dom.body.get("data-clicked") == "true"
    # and no other block
    assert {anchor for anchor in blocks if dom.opened[anchor]} == {target, clicked}
