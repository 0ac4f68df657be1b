"""Section: the failure gallery (overconfident failures, underconfident successes)."""

from __future__ import annotations

import html

import numpy as np

from fdbench.report.builder import ReportContext, _Builder
from fdbench.report.gallery import OVERCONFIDENT_FAILURE, UNDERCONFIDENT_SUCCESS, Gallery
from fdbench.report.html import image_html
from fdbench.report.tables import _stem


def _caption(gallery: Gallery, i: int) -> str:
    """The caption of gallery image ``i``: true and predicted class if known, confidence."""
    confidence = f"conf {gallery.confidence[i]:.3g}"
    if gallery.label is None or gallery.prediction is None:
        return confidence
    return (
        f"true {html.escape(str(gallery.label[i]))}<br>"
        f"pred {html.escape(str(gallery.prediction[i]))}<br>{confidence}"
    )


def _gallery_section(b: _Builder, gallery: Gallery) -> str:
    from fdbench.report.plots import image_png

    titles = {
        OVERCONFIDENT_FAILURE: "most over-confident failures",
        UNDERCONFIDENT_SUCCESS: "most under-confident successes",
    }
    parts = [
        '<p class="note">Per study and CSF: the wrong predictions the CSF trusts most (the '
        "silent failures it lets through first) and the correct predictions it trusts least "
        "(the first it would reject). Under each image: the true class, the predicted class "
        "(where the run folder records them) and the CSF's confidence.</p>"
    ]
    study = np.asarray(gallery.study)
    csf = np.asarray(gallery.csf)
    kind = np.asarray(gallery.kind)
    for s in dict.fromkeys(study):
        rows = []
        for c in dict.fromkeys(csf[study == s]):
            cells = []
            for k, title in titles.items():
                items = []
                for i in np.flatnonzero((study == s) & (csf == c) & (kind == k)):
                    name = _stem("gallery", s, c, k, str(i))
                    img = image_html(image_png(gallery.images[i]), name, f"{title} {i}", "tile")
                    b.figures.append(name)
                    caption = _caption(gallery, i)
                    items.append(f"<figure>{img}<figcaption>{caption}</figcaption></figure>")
                cells.append(f'<div class="gallery">{"".join(items) or "–"}</div>')
            rows.append(f'<div class="gallery-csf">{html.escape(c)}</div>{"".join(cells)}')
        head = "".join(f'<div class="gallery-head">{h}</div>' for h in ("CSF", *titles.values()))
        parts.append(b.group(s, f'<div class="gallery-grid">{head}{"".join(rows)}</div>'))
    return "".join(parts)


def _gallery(b: _Builder, context: ReportContext) -> str:
    gallery = context.inputs.gallery
    return "" if gallery is None or not len(gallery) else _gallery_section(b, gallery)
