#!/usr/bin/env python3
"""Tests tools/lpips_weights.py without torch and without a download: writes torch weight files
by hand in both of torch's formats (zip, legacy) from the tensors of ../shared/lpips
(alex_v0.1.f32.bin and its .json table), with the keys and shapes of torchvision's AlexNet and
lpips' v0.1 lin file (plus classifier tensors to ignore, tensors sharing one storage at offsets,
a transposed view), converts them, and requires the exact bytes of alex_v0.1.f32.bin. Then a
pickle that names os.system and a file of the wrong shape must be refused with a message.

usage: check_converter.py LPIPS_DIR TMP_DIR"""
import collections, json, os, pickle, struct, subprocess, sys, types, zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
CONVERTER = os.path.join(HERE, "..", "..", "tools", "lpips_weights.py")

# stand-ins for the torch names a weights pickle refers to, so that pickle writes them by name
torch = types.ModuleType("torch")
utils = types.ModuleType("torch._utils")


def _rebuild_tensor_v2(*args):
    raise AssertionError("never called here")


_rebuild_tensor_v2.__module__ = "torch._utils"
utils._rebuild_tensor_v2 = _rebuild_tensor_v2


class FloatStorage:
    pass


FloatStorage.__module__ = "torch"
torch.FloatStorage, torch._utils = FloatStorage, utils
sys.modules["torch"], sys.modules["torch._utils"] = torch, utils


class Store:
    def __init__(self, key, data):
        self.key, self.data = key, data


class T:
    def __init__(self, store, offset, size, stride):
        self.store, self.offset, self.size, self.stride = store, offset, size, stride

    def __reduce__(self):
        return (_rebuild_tensor_v2, (self.store, self.offset, tuple(self.size), tuple(self.stride), False,
                                     collections.OrderedDict()))


def dense(size):
    st, step = [], 1
    for s in reversed(size):
        st.insert(0, step)
        step *= s
    return st


class Writer(pickle.Pickler):
    def __init__(self, f, legacy):
        super().__init__(f, protocol=2)
        self.legacy = legacy

    def persistent_id(self, obj):
        if isinstance(obj, Store):
            n = len(obj.data) // 4
            return ("storage", FloatStorage, obj.key, "cpu", n) + ((None,) if self.legacy else ())
        return None


def write(path, state, stores, legacy):
    if legacy:
        with open(path, "wb") as f:
            pickle.dump(0x1950A86A20F9469CFC6C, f, protocol=2)
            pickle.dump(1001, f, protocol=2)
            pickle.dump({"protocol_version": 1001, "little_endian": True, "type_sizes": {"int": 4}}, f, protocol=2)
            Writer(f, True).dump(state)
            pickle.dump([s.key for s in stores], f, protocol=2)
            for s in stores:
                f.write(struct.pack("<q", len(s.data) // 4))
                f.write(s.data)
    else:
        with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
            import io
            buf = io.BytesIO()
            Writer(buf, False).dump(state)
            z.writestr("archive/data.pkl", buf.getvalue())
            z.writestr("archive/byteorder", "little")
            for s in stores:
                z.writestr("archive/data/" + s.key, s.data)
            z.writestr("archive/version", "3\n")


def make_files(lpips_dir, tmp, legacy):
    blob = open(os.path.join(lpips_dir, "alex_v0.1.f32.bin"), "rb").read()
    table = json.load(open(os.path.join(lpips_dir, "alex_v0.1.f32.json")))["tensors"]
    t = {e["name"]: (blob[e["offset"]:e["offset"] + e["nbytes"]], e["shape"]) for e in table}
    conv = {"net.slice1.0": "features.0", "net.slice2.3": "features.3", "net.slice3.6": "features.6",
            "net.slice4.8": "features.8", "net.slice5.10": "features.10"}
    alex, stores = collections.OrderedDict(), []
    for src, dst in conv.items():
        for part in ("weight", "bias"):
            data, shape = t[src + "." + part]
            if dst == "features.3" and part == "weight":
                # kept as the transpose of a (kh, kw, cin, cout)-ordered storage: a strided view
                o, i, kh, kw = shape
                vals = struct.unpack(f"<{len(data) // 4}f", data)
                perm = [0.0] * len(vals)
                for a in range(o):
                    for b in range(i):
                        for c in range(kh):
                            for d in range(kw):
                                perm[((c * kw + d) * i + b) * o + a] = vals[((a * i + b) * kh + c) * kw + d]
                s = Store(str(len(stores)), struct.pack(f"<{len(perm)}f", *perm))
                stores.append(s)
                alex[dst + "." + part] = T(s, 0, shape, [1, o, kw * i * o, i * o])
                continue
            s = Store(str(len(stores)), data)
            stores.append(s)
            alex[dst + "." + part] = T(s, 0, shape, dense(shape))
    cls = Store(str(len(stores)), struct.pack("<4f", 1, 2, 3, 4))  # ignored by the converter
    stores.append(cls)
    alex["classifier.1.weight"] = T(cls, 0, [2, 2], [2, 1])
    p_alex = os.path.join(tmp, f"alexnet_{'legacy' if legacy else 'zip'}.pth")
    write(p_alex, alex, stores, legacy)
    # the five lin weights in one storage at offsets (after 3 padding floats)
    lin, shared, off, parts = collections.OrderedDict(), Store("0", b""), 3, [struct.pack("<3f", 9, 9, 9)]
    for i in range(5):
        data, shape = t[f"lin{i}.model.1.weight"]
        lin[f"lin{i}.model.1.weight"] = T(shared, off, shape, dense(shape))
        parts.append(data)
        off += len(data) // 4
    shared.data = b"".join(parts)
    p_lin = os.path.join(tmp, f"lin_{'legacy' if legacy else 'zip'}.pth")
    write(p_lin, lin, [shared], legacy)
    return p_alex, p_lin, blob


def run(*args):
    return subprocess.run([sys.executable, CONVERTER, *args], capture_output=True, text=True)


def main():
    lpips_dir, tmp = sys.argv[1], sys.argv[2]
    os.makedirs(tmp, exist_ok=True)
    for legacy in (False, True):
        p_alex, p_lin, want = make_files(lpips_dir, tmp, legacy)
        out = os.path.join(tmp, "out.bin")
        r = run(p_alex, p_lin, out)
        if r.returncode != 0:
            sys.exit(f"check_converter: FAIL: {'legacy' if legacy else 'zip'}: {r.stderr.strip()}")
        if open(out, "rb").read() != want:
            sys.exit(f"check_converter: FAIL: {'legacy' if legacy else 'zip'} files convert to other bytes")
        print(f"check_converter: {'legacy' if legacy else 'zip'} format: identical to alex_v0.1.f32.bin; "
              + r.stdout.strip())
    # refused: a pickle naming os.system, the lin file given as the AlexNet file, a text file
    evil = os.path.join(tmp, "evil.pth")
    with open(evil, "wb") as f:
        f.write(b"cos\nsystem\n(S'echo pwned > " + tmp.encode() + b"/pwned'\ntR.")
    with zipfile.ZipFile(os.path.join(tmp, "evil_zip.pth"), "w") as z:
        z.writestr("archive/data.pkl", open(evil, "rb").read())
    junk = os.path.join(tmp, "junk.pth")
    open(junk, "w").write("not a weights file\n")
    for args, why in (((evil, p_lin), "refusing os.system"), ((os.path.join(tmp, "evil_zip.pth"), p_lin), "refusing os.system"),
                      ((p_lin, p_lin), "no tensor features.0.weight"), ((junk, p_lin), "not a torch weights file")):
        r = run(*args, os.path.join(tmp, "bad.bin"))
        if r.returncode != 1 or why not in r.stderr:
            sys.exit(f"check_converter: FAIL: {args[0]}: exit {r.returncode}, '{r.stderr.strip()}' (wanted '{why}')")
        print(f"check_converter: refused {os.path.basename(args[0])}: {r.stderr.strip()}")
    if os.path.exists(os.path.join(tmp, "pwned")) or os.path.exists(os.path.join(tmp, "bad.bin")):
        sys.exit("check_converter: FAIL: a refused file ran code or left an output")
    print("check_converter: ok")


main()
