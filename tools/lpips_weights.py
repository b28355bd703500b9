#!/usr/bin/env python3
"""Converts the published LPIPS-alex v0.1 weights to clsplat's weights file, without torch.

usage: lpips_weights.py ALEXNET.pth LIN.pth OUT.bin

ALEXNET.pth: torchvision's ImageNet AlexNet (alexnet-owt-7be5be79.pth); LIN.pth: lpips'
weights/v0.1/alex.pth. Both may be in torch's zip format (torch >= 1.6) or its legacy format
(a sequence of pickles followed by the raw storages). Pickles are read by a restricted
unpickler that accepts tensors (float32 storages, _rebuild_tensor / _rebuild_tensor_v2,
_rebuild_parameter) in (ordered) dicts and refuses anything else, so a file cannot run code.

OUT: little-endian float32, no header: the scaling layer's shift (3) and scale (3), conv1..conv5
weight (torch OIHW) and bias, lin0..lin4 weights (9,883,416 bytes); written to a temporary
name and renamed. Prints its sha256.
"""
import collections
import hashlib
import os
import pickle
import struct
import sys
import zipfile

# lpips' ScalingLayer constants (lpips/pretrained_networks.py)
SHIFT = (-0.030, -0.088, -0.188)
SCALE = (0.458, 0.448, 0.450)
CONVS = [("features.0", (64, 3, 11, 11)), ("features.3", (192, 64, 5, 5)), ("features.6", (384, 192, 3, 3)),
         ("features.8", (256, 384, 3, 3)), ("features.10", (256, 256, 3, 3))]
LINS = [(f"lin{i}.model.1.weight", (1, c, 1, 1)) for i, c in enumerate((64, 192, 384, 256, 256))]
TOTAL_BYTES = 9883416
LEGACY_MAGIC = 0x1950A86A20F9469CFC6C
LEGACY_PROTOCOL = 1001


class ConvertError(Exception):
    pass


class FloatStorageType:
    """Stands for torch.FloatStorage: the only storage type accepted."""


class Storage:
    def __init__(self, key):
        self.key, self.data = key, None


class Tensor:
    def __init__(self, storage, offset, size, stride):
        self.storage, self.offset, self.size, self.stride = storage, offset, tuple(size), tuple(stride)

    def values(self):
        """The elements in row-major order of SIZE, read through OFFSET and STRIDE."""
        n = 1
        for s in self.size:
            n *= s
        data = self.storage.data
        if data is None:
            raise ConvertError(f"storage {self.storage.key} has no data")
        count = len(data) // 4
        dense, step = [], 1
        for s in reversed(self.size):
            dense.insert(0, step)
            step *= s
        if tuple(dense) == self.stride or n <= 1:  # row-major: one slice
            if self.offset + n > count:
                raise ConvertError(f"tensor reads past the end of a {count}-element storage")
            return data[self.offset * 4:(self.offset + n) * 4]
        out = []
        idx = [0] * len(self.size)
        for _ in range(n):
            at = self.offset + sum(i * st for i, st in zip(idx, self.stride))
            if at >= count:
                raise ConvertError(f"tensor reads element {at} of a {count}-element storage")
            out.append(data[at * 4:at * 4 + 4])
            for d in range(len(idx) - 1, -1, -1):
                idx[d] += 1
                if idx[d] < self.size[d]:
                    break
                idx[d] = 0
        return b"".join(out)


def rebuild_tensor_v2(storage, offset, size, stride, requires_grad=False, hooks=None, metadata=None):
    if not isinstance(storage, Storage):
        raise ConvertError("a tensor without a storage")
    return Tensor(storage, offset, size, stride)


def rebuild_tensor(storage, offset, size, stride):
    return rebuild_tensor_v2(storage, offset, size, stride)


def rebuild_parameter(data, requires_grad=False, hooks=None):
    if not isinstance(data, Tensor):
        raise ConvertError("a parameter that is not a tensor")
    return data


ALLOWED = {
    ("collections", "OrderedDict"): collections.OrderedDict,
    ("torch._utils", "_rebuild_tensor_v2"): rebuild_tensor_v2,
    ("torch._utils", "_rebuild_tensor"): rebuild_tensor,
    ("torch._utils", "_rebuild_parameter"): rebuild_parameter,
    ("torch", "FloatStorage"): FloatStorageType,
}


class TensorUnpickler(pickle.Unpickler):
    """Resolves only ALLOWED globals; storages become Storage objects keyed by name."""

    def __init__(self, f, storages):
        super().__init__(f)
        self.storages = storages

    def find_class(self, module, name):
        if (module, name) in ALLOWED:
            return ALLOWED[(module, name)]
        raise ConvertError(f"refusing {module}.{name}: only tensors are read from weight files")

    def persistent_load(self, pid):
        if not isinstance(pid, tuple) or len(pid) < 5 or pid[0] != "storage":
            raise ConvertError(f"refusing persistent id {pid!r}: only storages are read")
        if pid[1] is not FloatStorageType:
            raise ConvertError(f"refusing storage type {pid[1]!r}: only float32 storages are read")
        if len(pid) > 5 and pid[5] is not None:
            raise ConvertError("refusing a storage view (legacy view_metadata)")
        key = str(pid[2])
        return self.storages.setdefault(key, Storage(key))


def load_zip(path):
    with zipfile.ZipFile(path) as z:
        names = z.namelist()
        pkl = [n for n in names if n.endswith("/data.pkl") or n == "data.pkl"]
        if len(pkl) != 1:
            raise ConvertError(f"{path}: a zip without exactly one data.pkl")
        prefix = pkl[0][: -len("data.pkl")]
        if prefix + "byteorder" in names and z.read(prefix + "byteorder").strip() != b"little":
            raise ConvertError(f"{path}: big-endian tensors are not supported")
        storages = {}
        obj = TensorUnpickler(z.open(pkl[0]), storages).load()
        for key, st in storages.items():
            st.data = z.read(prefix + "data/" + key)
    return obj


def load_legacy(path):
    with open(path, "rb") as f:
        plain = TensorUnpickler(f, {})
        if plain.load() != LEGACY_MAGIC:
            raise ConvertError(f"{path}: neither a zip nor a legacy torch file (magic number)")
        if plain.load() != LEGACY_PROTOCOL:
            raise ConvertError(f"{path}: unknown legacy protocol version")
        info = plain.load()
        if not isinstance(info, dict) or not info.get("little_endian", False):
            raise ConvertError(f"{path}: big-endian or unknown system info")
        storages = {}
        obj = TensorUnpickler(f, storages).load()
        keys = TensorUnpickler(f, {}).load()
        for key in keys:
            head = f.read(8)
            if len(head) != 8:
                raise ConvertError(f"{path}: truncated at storage {key}")
            (n,) = struct.unpack("<q", head)
            data = f.read(n * 4)
            if len(data) != n * 4:
                raise ConvertError(f"{path}: truncated in storage {key}")
            if str(key) in storages:
                storages[str(key)].data = data
    return obj


def load(path):
    try:
        obj = load_zip(path) if zipfile.is_zipfile(path) else load_legacy(path)
    except (pickle.UnpicklingError, EOFError, ValueError, KeyError, struct.error) as e:
        raise ConvertError(f"{path}: not a torch weights file ({e})")
    if isinstance(obj, dict) and "state_dict" in obj:
        obj = obj["state_dict"]
    if not isinstance(obj, dict):
        raise ConvertError(f"{path}: the pickle is not a dict of tensors")
    return obj


def tensor(d, key, shape, path):
    t = d.get(key)
    if not isinstance(t, Tensor):
        raise ConvertError(f"{path}: no tensor {key}")
    if t.size != shape:
        raise ConvertError(f"{path}: {key} has shape {t.size}, expected {shape}")
    return t.values()


def convert(alexnet, lin, out):
    a, l = load(alexnet), load(lin)
    parts = [struct.pack("<3f", *SHIFT), struct.pack("<3f", *SCALE)]
    for name, shape in CONVS:
        parts.append(tensor(a, name + ".weight", shape, alexnet))
        parts.append(tensor(a, name + ".bias", (shape[0],), alexnet))
    for name, shape in LINS:
        parts.append(tensor(l, name, shape, lin))
    blob = b"".join(parts)
    if len(blob) != TOTAL_BYTES:
        raise ConvertError(f"{len(blob)} bytes, expected {TOTAL_BYTES}")
    tmp = out + ".tmp"
    with open(tmp, "wb") as f:
        f.write(blob)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, out)
    return hashlib.sha256(blob).hexdigest()


def main():
    if len(sys.argv) != 4:
        print(__doc__.strip().split("\n\n")[1], file=sys.stderr)
        return 2
    try:
        digest = convert(*sys.argv[1:])
    except (ConvertError, OSError) as e:
        print(f"lpips_weights: error: {e}", file=sys.stderr)
        return 1
    print(f"lpips_weights: wrote {sys.argv[3]} ({TOTAL_BYTES} bytes, sha256 {digest})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
