"""Tests for the on-disk dataset readers, writing tiny files in each official format."""

from __future__ import annotations

import pickle
import struct

import numpy as np
import pytest
from PIL import Image

from fdbench.data.sources import readers

RNG = np.random.default_rng(0)


# --------------------------------------------------------------------------- Python 2 pickles
# The CIFAR python batches were written by Python 2's cPickle (protocol 2): str keys and values
# are byte strings (SHORT_BINSTRING / BINSTRING), arrays are rebuilt by
# numpy.core.multiarray._reconstruct with a dtype pickled as dtype('u1', 0, 1) and state
# (3, '|', None, None, None, -1, -1, 0), and the raw data is a byte string. _py2_pickle writes
# exactly these opcodes, so the reader is tested on the bytes a Python 2 writer produced.


def _py2_str(b: bytes) -> bytes:
    return b"U" + bytes([len(b)]) + b if len(b) < 256 else b"T" + struct.pack("<i", len(b)) + b


def _py2_int(v: int) -> bytes:
    if 0 <= v < 256:
        return b"K" + bytes([v])
    return b"M" + struct.pack("<H", v) if 0 <= v < 65536 else b"J" + struct.pack("<i", v)


def _py2_obj(obj) -> bytes:
    if isinstance(obj, bytes):
        return _py2_str(obj)
    if isinstance(obj, int):
        return _py2_int(obj)
    if obj is None:
        return b"N"
    if isinstance(obj, list):
        return b"](" + b"".join(_py2_obj(v) for v in obj) + b"e"
    if isinstance(obj, tuple):
        return b"(" + b"".join(_py2_obj(v) for v in obj) + b"t"
    if isinstance(obj, dict):
        return b"}(" + b"".join(_py2_obj(k) + _py2_obj(v) for k, v in obj.items()) + b"u"
    assert isinstance(obj, np.ndarray) and obj.dtype == np.uint8 and obj.flags.c_contiguous
    dtype = (
        b"cnumpy\ndtype\n"
        + _py2_obj((b"u1", 0, 1))
        + b"R"
        + _py2_obj((3, b"|", None, None, None, -1, -1, 0))
        + b"b"
    )
    state = b"(" + _py2_int(1) + _py2_obj(obj.shape) + dtype + b"\x89" + _py2_str(obj.tobytes())
    return (
        b"cnumpy.core.multiarray\n_reconstruct\ncnumpy\nndarray\n"
        + _py2_obj((0,))
        + _py2_obj(b"b")
        + b"\x87R"
        + state
        + b"tb"
    )


def _dump(path, obj):
    path.write_bytes(b"\x80\x02" + _py2_obj(obj) + b".")


def _cifar_rows(n):
    hwc = RNG.integers(0, 256, (n, 32, 32, 3), dtype=np.uint8)
    return hwc, hwc.transpose(0, 3, 1, 2).reshape(n, 3072)


def test_py2_pickle_writer_matches_python():
    rows = np.arange(6, dtype=np.uint8).reshape(2, 3)
    obj = {b"data": rows, b"labels": [1, 300, 70000], b"batch_label": b"x" * 300}
    out = pickle.loads(b"\x80\x02" + _py2_obj(obj) + b".", encoding="bytes")
    np.testing.assert_array_equal(out.pop(b"data"), rows)
    assert out == {b"labels": [1, 300, 70000], b"batch_label": b"x" * 300}


def test_cifar10(tmp_path):
    expected = []
    for i in range(1, 6):
        hwc, rows = _cifar_rows(2)
        expected.append(hwc)
        _dump(
            tmp_path / f"data_batch_{i}",
            {
                b"batch_label": f"training batch {i} of 5".encode(),
                b"labels": [i, i + 1],
                b"data": rows,
                b"filenames": [b"a_s_000001.png", b"b_s_000002.png"],
            },
        )
    hwc, rows = _cifar_rows(3)
    _dump(
        tmp_path / "test_batch",
        {
            b"batch_label": b"testing batch 1 of 1",
            b"labels": [0, 9, 4],
            b"data": rows,
            b"filenames": [b"x.png", b"y.png", b"z.png"],
        },
    )
    _dump(
        tmp_path / "batches.meta",
        {
            b"num_cases_per_batch": 10000,
            b"label_names": [f"c{i}".encode() for i in range(10)],
            b"num_vis": 3072,
        },
    )
    train = readers.read_cifar10(tmp_path, "train")
    np.testing.assert_array_equal(train.images, np.concatenate(expected))
    assert train.labels.tolist() == [1, 2, 2, 3, 3, 4, 4, 5, 5, 6]
    test = readers.read_cifar10(tmp_path, "test")
    np.testing.assert_array_equal(test.images, hwc)
    assert test.class_names[9] == "c9" and test.labels.tolist() == [0, 9, 4]
    _dump(tmp_path / "test_batch", {b"labels": [0, 1], b"data": rows})
    with pytest.raises(ValueError, match=r"shape \(2, 3072\)"):
        readers.read_cifar10(tmp_path, "test")


def test_cifar100_fine_and_coarse(tmp_path):
    hwc, rows = _cifar_rows(4)
    batch = {
        b"filenames": [b"a.png", b"b.png", b"c.png", b"d.png"],
        b"batch_label": b"testing batch 1 of 1",
        b"fine_labels": [0, 99, 5, 7],
        b"coarse_labels": [4, 19, 0, 1],
        b"data": rows,
    }
    _dump(tmp_path / "test", batch)
    _dump(
        tmp_path / "meta",
        {
            b"fine_label_names": [f"f{i}".encode() for i in range(100)],
            b"coarse_label_names": [f"s{i}".encode() for i in range(20)],
        },
    )
    fine = readers.read_cifar100(tmp_path, "test")
    coarse = readers.read_cifar100(tmp_path, "test", label="coarse")
    np.testing.assert_array_equal(fine.images, hwc)
    np.testing.assert_array_equal(coarse.images, hwc)
    assert fine.labels.tolist() == [0, 99, 5, 7] and coarse.labels.tolist() == [4, 19, 0, 1]
    assert len(fine.class_names) == 100 and coarse.class_names[19] == "s19"
    assert len(coarse.class_names) == 20 and coarse.name == "cifar100_coarse"


def test_cifar_pickle_with_code_is_refused(tmp_path):
    class Evil:
        def __reduce__(self):
            return (print, ("pwned",))

    (tmp_path / "test_batch").write_bytes(pickle.dumps({b"data": Evil()}, protocol=2))
    with pytest.raises(pickle.UnpicklingError):
        readers.read_cifar10(tmp_path, "test")


def test_svhn(tmp_path):
    from scipy.io import savemat

    # train_32x32.mat / test_32x32.mat: MATLAB 5 files, X uint8 32×32×3×N, y uint8 N×1 in 1..10
    x = RNG.integers(0, 256, (32, 32, 3, 3), dtype=np.uint8)
    savemat(tmp_path / "test_32x32.mat", {"X": x, "y": np.array([[10], [1], [9]], np.uint8)})
    ds = readers.read_svhn(tmp_path, "test")
    assert ds.labels.tolist() == [0, 1, 9] and ds.images.shape == (3, 32, 32, 3)
    np.testing.assert_array_equal(ds.images[2], x[..., 2])
    savemat(tmp_path / "extra_32x32.mat", {"X": x, "y": np.array([[0], [1], [9]], np.uint8)})
    with pytest.raises(ValueError, match=r"1\.\.10"):
        readers.read_svhn(tmp_path, "extra")
    savemat(tmp_path / "train_32x32.mat", {"X": x, "y": np.array([[1], [9]], np.uint8)})
    with pytest.raises(ValueError, match="32×32×3×N and N labels"):
        readers.read_svhn(tmp_path, "train")


def _jpeg(path, array):
    """Save ``array`` as a real JPEG file and return what Pillow decodes from it."""
    Image.fromarray(array).save(path, format="JPEG", quality=90)
    with Image.open(path) as im:
        assert im.format == "JPEG"
        return np.asarray(im.convert("RGB"))


def test_tiny_imagenet(tmp_path):
    # tiny-imagenet-200: wnids.txt, words.txt (wnid<TAB>words for all of WordNet),
    # train/<wnid>/images/<wnid>_<i>.JPEG + train/<wnid>/<wnid>_boxes.txt,
    # val/images/val_<i>.JPEG + val/val_annotations.txt (file, wnid, box), test/images (no labels)
    wnids = ["n01443537", "n01629819"]
    (tmp_path / "wnids.txt").write_text("\n".join(wnids) + "\n")
    (tmp_path / "words.txt").write_text(
        "n00001740\tentity\nn01443537\tgoldfish, Carassius auratus\nn01629819\tEuropean fire "
        "salamander, Salamandra salamandra\n"
    )
    decoded = {}
    for k, w in enumerate(wnids):
        d = tmp_path / "train" / w / "images"
        d.mkdir(parents=True)
        for j in range(2):
            arr = RNG.integers(0, 256, (64, 64, 3), dtype=np.uint8)
            if (k, j) == (1, 0):  # Tiny ImageNet has some greyscale JPEGs
                arr = arr[..., 0]
            decoded[w, j] = _jpeg(d / f"{w}_{j}.JPEG", arr)
        (tmp_path / "train" / w / f"{w}_boxes.txt").write_text(f"{w}_0.JPEG\t0\t0\t63\t63\n")
    (tmp_path / "val" / "images").mkdir(parents=True)
    (tmp_path / "test" / "images").mkdir(parents=True)
    val = {f"val_{i}.JPEG": RNG.integers(0, 256, (64, 64, 3), dtype=np.uint8) for i in range(2)}
    val_decoded = {f: _jpeg(tmp_path / "val" / "images" / f, a) for f, a in val.items()}
    _jpeg(tmp_path / "test" / "images" / "test_0.JPEG", val["val_0.JPEG"])
    (tmp_path / "val" / "val_annotations.txt").write_text(
        "val_0.JPEG\tn01629819\t0\t32\t44\t62\nval_1.JPEG\tn01443537\t52\t55\t57\t59\n"
    )
    train = readers.read_tiny_imagenet(tmp_path, "train")
    assert train.labels.tolist() == [0, 0, 1, 1] and train.images.shape == (4, 64, 64, 3)
    assert train.class_names == (
        "goldfish, Carassius auratus",
        "European fire salamander, Salamandra salamandra",
    )
    np.testing.assert_array_equal(train.images[3], decoded["n01629819", 1])
    grey = train.images[2]
    assert np.array_equal(grey[..., 0], grey[..., 1]) and np.array_equal(grey, decoded[wnids[1], 0])
    val_ds = readers.read_tiny_imagenet(tmp_path, "val")
    assert val_ds.labels.tolist() == [1, 0]
    np.testing.assert_array_equal(val_ds.images[1], val_decoded["val_1.JPEG"])
    with pytest.raises(ValueError, match="split must be 'train' or 'val'"):
        readers.read_tiny_imagenet(tmp_path, "test")


def test_medmnist(tmp_path):
    # <flag>.npz as distributed (np.savez_compressed): {train,val,test}_images uint8 N×28×28
    # (grey) or N×28×28×3 (colour), {train,val,test}_labels uint8 N×1 (N×L for multi-label).
    sizes = (("train", 3), ("val", 2), ("test", 2))
    grey = {f"{s}_images": RNG.integers(0, 256, (n, 28, 28), dtype=np.uint8) for s, n in sizes}
    labels = {f"{s}_labels": np.array([[i % 3] for i in range(n)], np.uint8) for s, n in sizes}
    np.savez_compressed(tmp_path / "pneumoniamnist.npz", **grey, **labels)
    ds = readers.read_medmnist(tmp_path / "pneumoniamnist.npz", "train")
    assert ds.images.shape == (3, 28, 28, 1) and ds.labels.tolist() == [0, 1, 2]
    assert ds.name == "pneumoniamnist" and len(ds.class_names) == 3
    np.testing.assert_array_equal(ds.images[..., 0], grey["train_images"])
    colour = {f"{s}_images": RNG.integers(0, 256, (n, 28, 28, 3), dtype=np.uint8) for s, n in sizes}
    np.savez_compressed(tmp_path / "pathmnist.npz", **colour, **labels)
    val = readers.read_medmnist(tmp_path / "pathmnist.npz", "val", class_names=("a", "b", "c"))
    np.testing.assert_array_equal(val.images, colour["val_images"])
    assert val.labels.tolist() == [0, 1] and val.class_names == ("a", "b", "c")
    np.savez_compressed(
        tmp_path / "chestmnist.npz",
        **grey,
        **{f"{s}_labels": np.zeros((n, 14), np.uint8) for s, n in sizes},
    )
    with pytest.raises(ValueError, match="multi-label"):
        readers.read_medmnist(tmp_path / "chestmnist.npz", "train")


def test_cifar_c(tmp_path):
    # CIFAR-10-C / CIFAR-100-C: <corruption>.npy uint8 (5·n)×32×32×3, severity s in rows
    # (s−1)·n … s·n − 1 (n = 10 000 in the release), labels.npy uint8 of length 5·n.
    n = 4
    images = RNG.integers(0, 256, (5 * n, 32, 32, 3), dtype=np.uint8)
    labels = np.tile(np.array([3, 0, 9, 1], np.uint8), 5)
    np.save(tmp_path / "fog.npy", images)
    np.save(tmp_path / "labels.npy", labels)
    for severity in range(1, 6):
        ds = readers.read_cifar_c(tmp_path, "fog", severity, class_names=tuple("abcdefghij"))
        block = slice((severity - 1) * n, severity * n)
        np.testing.assert_array_equal(ds.images, images[block])
        assert ds.labels.tolist() == [3, 0, 9, 1] and ds.labels.dtype == np.int64
    with pytest.raises(ValueError, match="severity"):
        readers.read_cifar_c(tmp_path, "fog", 6, class_names=tuple("abcdefghij"))
    with pytest.raises(ValueError, match="corruption must be a file name"):
        readers.read_cifar_c(tmp_path, "../fog", 1, class_names=tuple("abcdefghij"))
    np.save(tmp_path / "snow.npy", images[:-1])
    with pytest.raises(ValueError, match="multiple of 5"):
        readers.read_cifar_c(tmp_path, "snow", 1, class_names=tuple("abcdefghij"))
    with pytest.raises(FileNotFoundError, match=r"frost\.npy"):
        readers.read_cifar_c(tmp_path, "frost", 1, class_names=tuple("abcdefghij"))


def test_image_folder(tmp_path):
    for k, cls in enumerate(["dog", "cat"]):
        (tmp_path / cls).mkdir()
        Image.fromarray(np.full((5, 6, 3), 100 + k, np.uint8)).save(tmp_path / cls / "a.png")
    (tmp_path / "cat" / "notes.txt").write_text("ignored")
    ds = readers.read_image_folder(tmp_path)
    assert ds.class_names == ("cat", "dog") and ds.labels.tolist() == [0, 1]
    assert ds.images.shape == (2, 5, 6, 3) and ds.images[0, 0, 0, 0] == 101
    grey = readers.read_image_folder(tmp_path, mode="L")
    assert grey.images.shape == (2, 5, 6, 1)
