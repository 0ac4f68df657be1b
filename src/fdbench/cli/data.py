"""``fdbench data``: fetch datasets, build FIX sets, draw the corruptions."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    pass
from fdbench.cli.app import FORCE_HELP, _forced, app, check_outputs

data_app = typer.Typer(
    help="Datasets: fetch with checksums, inspect corruptions.", no_args_is_help=True
)
app.add_typer(data_app, name="data")


@data_app.command("fetch")
def data_fetch(
    name: Annotated[
        str,
        typer.Argument(
            help="fashion_mnist, mnist, animal_mnist, digits, textures, noise, 'all', or "
            "'wordnet' (the WordNet 3.0 noun database of Kim et al.'s benchmarks)."
        ),
    ],
    data_dir: Annotated[
        Path | None,
        typer.Option(help="Cache folder (default: $FDBENCH_DATA or ~/.cache/fdbench)."),
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Fetch again even if cached.")] = False,
) -> None:
    """Download (or build) datasets into the cache, verifying SHA-256 checksums."""
    from fdbench.core.io import check_output_folder
    from fdbench.data import DATASETS, fetch, fetch_all, fetch_wordnet

    if name not in ("all", "wordnet") and name not in DATASETS:
        raise ValueError(
            f"NAME must be 'all', 'wordnet' or one of {', '.join(DATASETS)}; got {name!r}"
        )
    if data_dir is not None:
        check_output_folder(data_dir, "--data-dir")
    if name == "wordnet":
        folders = {name: fetch_wordnet(data_dir=data_dir, force=force)}
    elif name == "all":
        folders = fetch_all(data_dir=data_dir, force=force)
    else:
        folders = {name: fetch(name, data_dir=data_dir, force=force)}
    for dataset, folder in folders.items():
        typer.echo(f"{dataset}: {folder}")


@data_app.command("prepare-fix")
def data_prepare_fix(
    source: Annotated[Path, typer.Argument(help="Folder of original images (sub-folders kept).")],
    destination: Annotated[Path, typer.Argument(help="Folder to write the 32×32 PNGs to.")],
    overwrite: Annotated[
        bool, typer.Option("--overwrite", help="Replace existing output files.")
    ] = False,
) -> None:
    """Build a FIX set (LSUN-FIX, Tiny ImageNet-FIX; Tack et al. 2020) from original images:
    shorter side to 256, centre crop 256, resize to 32×32 (bilinear), saved as PNG."""
    from fdbench.data.sources.fix import prepare_fix

    n = prepare_fix(source, destination, overwrite=overwrite)
    typer.echo(f"wrote {n} images to {destination}")


@data_app.command("show-corruptions")
def data_show_corruptions(
    out: Annotated[Path, typer.Option("--out", help="PNG file to write.")],
    seed: Annotated[int, typer.Option(help="Seed of the corruptions.")] = 0,
    data_dir: Annotated[Path | None, typer.Option(help="Cache folder.")] = None,
    force: Annotated[bool, typer.Option("--force", help=FORCE_HELP)] = False,
) -> None:
    """Draw the 15 corruptions × 5 severities on Fashion-MNIST test images into a PNG grid."""
    from fdbench.core.io import check_output_file
    from fdbench.data.shifts.corruptions import show_corruptions
    from fdbench.data.sources.cache import data_dir as cache_dir

    with _forced(force):
        check_output_file(out, "--out", (".png",))
        check_outputs({"--out": out}, [cache_dir(data_dir) / "fashion_mnist"])
        typer.echo(f"wrote {show_corruptions(None, out, seed=seed, data_dir=data_dir)}")
