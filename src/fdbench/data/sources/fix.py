"""The FIX resize of Tack et al. (2020) that builds LSUN-FIX and Tiny-ImageNet-FIX from originals.

The widely used "resized LSUN" and Tiny ImageNet images carry down-sampling artefacts that make
them detectable without looking at their content (Tack et al., "CSI", NeurIPS 2020, Section 4
and Appendix; Kim et al. 2023, Section 3.1 and Fig. 2). CSI rebuilds them from the original
images with ``Resize(256)``, ``CenterCrop(256)``, ``Resize(32)`` (torchvision on PIL images,
bilinear) and saves them losslessly as PNG (github.com/alinlab/CSI,
``datasets/lsun_fix_preprocess.py`` and ``datasets/imagenet_fix_preprocess.py``); Kim et al.
use the same "fixed resize operation" for LSUN-FIX and Tiny ImageNet-FIX.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from fdbench.data.sources.readers import IMAGE_SUFFIXES

#: Side of the FIX images.
FIX_SIZE = 32
#: Side of the centre square cut from the image after its shorter side is scaled to it.
FIX_INTERMEDIATE = 256


def shorter_side_to(image, side: int):
    """Scale so that the shorter side is ``side``; the longer becomes ``int(side · long /
    short)`` (torchvision's ``Resize(int)`` rule), bilinear with Pillow's anti-aliasing."""
    from PIL import Image

    width, height = image.size
    if min(width, height) == side:
        return image
    if width <= height:
        size = (side, int(side * height / width))
    else:
        size = (int(side * width / height), side)
    return image.resize(size, Image.BILINEAR)


def center_crop(image, side: int):
    """The centre ``side`` × ``side`` square, offsets ``round((extent − side) / 2)`` (Python's
    rounding, as torchvision's ``CenterCrop``)."""
    width, height = image.size
    top, left = round((height - side) / 2.0), round((width - side) / 2.0)
    return image.crop((left, top, left + side, top + side))


def fix_resize(image, *, size: int = FIX_SIZE, intermediate: int = FIX_INTERMEDIATE) -> np.ndarray:
    """One image resized the FIX way: shorter side to ``intermediate``, centre crop
    ``intermediate`` × ``intermediate`` (offsets ``round((side − intermediate) / 2)``, as
    torchvision's ``CenterCrop``), then ``size`` × ``size``; bilinear, RGB, uint8.

    ``image``: a PIL image or a uint8 H×W×3 (or H×W grey) array.
    """
    from PIL import Image

    if isinstance(image, np.ndarray):
        if image.dtype != np.uint8 or image.ndim not in (2, 3):
            raise TypeError("image must be a PIL image or a uint8 H×W or H×W×3 array")
        image = Image.fromarray(image)
    if not isinstance(image, Image.Image):
        raise TypeError(f"image must be a PIL image or a uint8 array; got {type(image).__name__}")
    if not isinstance(size, int) or not isinstance(intermediate, int) or not 0 < size:
        raise ValueError(f"size and intermediate must be positive ints; got {size}, {intermediate}")
    if intermediate < size:
        raise ValueError(f"intermediate must be ≥ size; got {intermediate} < {size}")
    image = center_crop(shorter_side_to(image.convert("RGB"), intermediate), intermediate)
    image = image.resize((size, size), Image.BILINEAR)
    return np.asarray(image, dtype=np.uint8)


def prepare_fix(
    source: str | os.PathLike,
    destination: str | os.PathLike,
    *,
    size: int = FIX_SIZE,
    overwrite: bool = False,
) -> int:
    """Write the FIX version of every image under ``source`` to ``destination`` as PNG.

    The folder structure is kept (``a/b/x.JPEG`` → ``a/b/x.png``), so a folder with one
    sub-folder per class (LSUN categories exported to images, ImageNet's ``train/nXXXXXXXX``)
    stays one. Returns the number of images written. An existing output file is an error
    unless ``overwrite``.
    """
    from PIL import Image

    source, destination = Path(source).expanduser(), Path(destination).expanduser()
    if not source.is_dir():
        raise FileNotFoundError(f"source folder {source} does not exist")
    if destination.resolve().is_relative_to(source.resolve()):
        raise ValueError(f"destination {destination} must lie outside source {source}")
    files = sorted(
        p for p in source.rglob("*") if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES
    )
    if not files:
        raise ValueError(f"no images ({', '.join(IMAGE_SUFFIXES)}) found under {source}")
    targets = [destination / f.relative_to(source).with_suffix(".png") for f in files]
    if len(set(targets)) != len(targets):
        raise ValueError(f"two images under {source} differ only in their suffix")
    if not overwrite:
        existing = [t for t in targets if t.exists()]
        if existing:
            raise FileExistsError(f"{existing[0]} exists (pass overwrite to replace)")
    for file, target in zip(files, targets, strict=True):
        with Image.open(file) as im:
            out = fix_resize(im, size=size)
        target.parent.mkdir(parents=True, exist_ok=True)
        Image.fromarray(out).save(target, format="PNG")
    return len(files)
