"""Where image data come from: the catalogue of named datasets, fetching with checksums, the
on-disk cache and readers of official formats."""
