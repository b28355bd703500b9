#!/usr/bin/env python3
"""Checks the TensorBoard event files of a clsplat output folder with an independent decoder:
Google's protobuf runtime (messages compiled from tb_events.proto by protoc at run time) and
python3-crc32c for the TFRecord checksums (or the same CRC from its definition where that
package is missing). Checks every record's CRCs, the version record, the
scalars against train_log.jsonl (every number of every line, tag by clsplat's rule), the
evaluation scalars against metrics.json, that images decode as PNG of the declared size, and
that histogram buckets sum to the Gaussian count of the log line at the same step.

usage: check_events.py OUT [--files N] [--truncated-tail-ok] [--min-histograms N] [--min-images N] [--lpips]
Prints a summary line; exits 1 with the first failure."""
import atexit, glob, json, os, shutil, struct, subprocess, sys, tempfile, zlib

try:
    from crc32c import crc32c
except ImportError:
    # python3-crc32c missing (a GPU machine without Debian's packages): the same CRC (Castagnoli,
    # reflected polynomial 0x82F63B78) from its definition, bit by bit through a byte table
    _TABLE = []
    for _n in range(256):
        _c = _n
        for _ in range(8):
            _c = (_c >> 1) ^ 0x82F63B78 if _c & 1 else _c >> 1
        _TABLE.append(_c)

    def crc32c(data):
        c = 0xFFFFFFFF
        for b in data:
            c = _TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
        return c ^ 0xFFFFFFFF


def fail(msg):
    print("check_events: FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def load_proto():
    here = os.path.dirname(os.path.abspath(__file__))
    out = tempfile.mkdtemp(prefix="clsplat-proto-")
    atexit.register(shutil.rmtree, out, True)  # this script's own folder
    subprocess.run(["protoc", "-I" + here, "--python_out=" + out, os.path.join(here, "tb_events.proto")], check=True)
    sys.path.insert(0, out)
    import tb_events_pb2
    return tb_events_pb2


def masked(crc):
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def records(path, truncated_ok):
    data = open(path, "rb").read()
    pos, out = 0, []
    while pos < len(data):
        if pos + 12 > len(data):
            if truncated_ok: break
            fail(f"{path}: truncated record header at byte {pos}")
        (n,) = struct.unpack_from("<Q", data, pos)
        (lcrc,) = struct.unpack_from("<I", data, pos + 8)
        if lcrc != masked(crc32c(data[pos:pos + 8])):
            fail(f"{path}: length CRC mismatch at byte {pos}")
        if pos + 12 + n + 4 > len(data):
            if truncated_ok: break
            fail(f"{path}: truncated record at byte {pos}")
        body = data[pos + 12:pos + 12 + n]
        (dcrc,) = struct.unpack_from("<I", data, pos + 12 + n)
        if dcrc != masked(crc32c(body)):
            fail(f"{path}: data CRC mismatch at byte {pos}")
        out.append(body)
        pos += 12 + n + 4
    return out


def png_size(blob):
    """Decodes a PNG far enough to prove it whole: chunk CRCs, IHDR, inflated IDAT size."""
    if blob[:8] != b"\x89PNG\r\n\x1a\n": fail("image is not a PNG (signature)")
    pos, idat, w = 8, b"", None
    while pos < len(blob):
        (n,) = struct.unpack_from(">I", blob, pos)
        kind = blob[pos + 4:pos + 8]
        chunk = blob[pos + 8:pos + 8 + n]
        (crc,) = struct.unpack_from(">I", blob, pos + 8 + n)
        if crc != zlib.crc32(kind + chunk) & 0xFFFFFFFF: fail("PNG chunk CRC mismatch")
        if kind == b"IHDR": w, h, depth, ctype = struct.unpack(">IIBB", chunk[:10])
        if kind == b"IDAT": idat += chunk
        if kind == b"IEND": break
        pos += 12 + n
    if w is None or depth != 8 or ctype not in (2, 6): fail("PNG without an 8-bit RGB/RGBA IHDR")
    ch = 3 if ctype == 2 else 4
    if len(zlib.decompress(idat)) != h * (1 + w * ch): fail("PNG pixel data has the wrong size")
    return w, h, ch


def tag_of(key):
    if key == "iteration": return None
    if key.endswith("_mb"): return "memory/" + key
    if key in ("its", "seconds"): return "perf/" + key
    return "train/" + key


def close(a, b):
    return abs(a - struct.unpack("<f", struct.pack("<f", b))[0]) <= 1e-6 * max(1.0, abs(b))


def main():
    args = sys.argv[1:]
    out = args[0]
    opt = lambda name, d: int(args[args.index(name) + 1]) if name in args else d
    pb = load_proto()
    files = sorted(glob.glob(os.path.join(out, "events.out.tfevents.*")))
    if opt("--files", len(files)) != len(files) or not files:
        fail(f"{len(files)} event files in {out}, expected {opt('--files', len(files)) or 'some'}")
    scalars, images, histos = {}, 0, 0
    gaussians = {}
    for line in open(os.path.join(out, "train_log.jsonl")):
        rec = json.loads(line)
        gaussians[rec["iteration"]] = rec["gaussians"]
    histo_steps = []
    for i, path in enumerate(files):
        recs = records(path, "--truncated-tail-ok" in args and i == len(files) - 1)
        if not recs: fail(f"{path}: no records")
        first = pb.Event.FromString(recs[0])
        if first.file_version != "brain.Event:2": fail(f"{path}: first record is not the version record")
        for body in recs[1:]:
            ev = pb.Event.FromString(body)
            if not ev.HasField("summary"): fail(f"{path}: event at step {ev.step} has no summary")
            if ev.wall_time < 1.5e9: fail(f"{path}: wall_time {ev.wall_time} is not a Unix time")
            for v in ev.summary.value:
                kind = v.WhichOneof("value")
                if kind == "simple_value":
                    scalars[(v.tag, ev.step)] = v.simple_value
                elif kind == "image":
                    w, h, ch = png_size(v.image.encoded_image_string)
                    if (w, h, ch) != (v.image.width, v.image.height, v.image.colorspace):
                        fail(f"image {v.tag}: PNG {w}x{h}x{ch}, declared {v.image.width}x{v.image.height}x{v.image.colorspace}")
                    images += 1
                elif kind == "histo":
                    hp = v.histo
                    if len(hp.bucket) != len(hp.bucket_limit): fail(f"histogram {v.tag}: buckets and limits differ")
                    if sum(hp.bucket) != hp.num: fail(f"histogram {v.tag} at {ev.step}: buckets sum to {sum(hp.bucket)}, num {hp.num}")
                    if ev.step in gaussians and hp.num != gaussians[ev.step]:
                        fail(f"histogram {v.tag} at {ev.step}: {hp.num} values, the log says {gaussians[ev.step]} Gaussians")
                    if ev.step not in gaussians and "--truncated-tail-ok" not in args:
                        fail(f"histogram {v.tag} at {ev.step}: no log line at that step")
                    if list(hp.bucket_limit) != sorted(hp.bucket_limit): fail(f"histogram {v.tag}: limits not increasing")
                    histos += 1
                    histo_steps.append(ev.step)
                else:
                    fail(f"value {v.tag}: unexpected kind {kind}")
    n_checked = 0
    for line in open(os.path.join(out, "train_log.jsonl")):
        rec = json.loads(line)
        for key, val in rec.items():
            tag = tag_of(key)
            if tag is None or not isinstance(val, (int, float)): continue
            got = scalars.get((tag, rec["iteration"]))
            if got is None: fail(f"no scalar {tag} at step {rec['iteration']}")
            if not close(got, val): fail(f"{tag} at {rec['iteration']}: {got} in the events, {val} in train_log.jsonl")
            n_checked += 1
    mpath = os.path.join(out, "metrics.json")
    n_eval = 0
    if os.path.exists(mpath):
        for rec in json.load(open(mpath)):
            for key in ("l1", "psnr", "ssim", "lpips", "peak_device_mb"):
                if not isinstance(rec.get(key), (int, float)): continue
                tag = f"eval/{rec['split']}/{key}"
                got = scalars.get((tag, rec["iteration"]))
                if got is None: fail(f"no scalar {tag} at step {rec['iteration']}")
                if not close(got, rec[key]): fail(f"{tag}: {got} in the events, {rec[key]} in metrics.json")
                n_eval += 1
    if "--lpips" in args and not any(t.endswith("/lpips") for (t, _) in scalars):
        fail("no eval/<split>/lpips scalar")
    if histos < opt("--min-histograms", 0): fail(f"{histos} histograms, expected at least {opt('--min-histograms', 0)}")
    if images < opt("--min-images", 0): fail(f"{images} images, expected at least {opt('--min-images', 0)}")
    print(f"check_events: ok: {len(files)} files, {n_checked} train scalars and {n_eval} evaluation scalars match "
          f"the logs, {images} PNG images, {histos} histograms (steps {sorted(set(histo_steps))})")


main()
