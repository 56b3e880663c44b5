#!/usr/bin/env python3
"""OCR on a rendered image with lowconv: PP-OCRv4 det -> text line boxes -> crop -> rec -> CTC decode.
The models are rapidocr-onnxruntime's (tests/py_test_rapidocr.py fetches them); pass quantized
files (lowconv quantize) to compare. Needs numpy and Pillow.
Usage: examples/ocr.py --det DET.onnx --rec REC.onnx [--threads 2] [--text "LINE ONE" "LINE TWO"]"""
import argparse
import time

import numpy as np
from PIL import Image, ImageDraw, ImageFont

import lowconv


def render(lines, w=640, line_h=64):
    img = Image.new("RGB", (w, line_h * (len(lines) + 1)), (250, 250, 245))
    d = ImageDraw.Draw(img)
    font = ImageFont.load_default(size=line_h // 2)
    for i, t in enumerate(lines):
        d.text((24, line_h // 2 + i * line_h), t, fill=(20, 20, 30), font=font)
    return img


def detect(det, img, thresh=0.3):
    """Boxes (x0, y0, x1, y1) of text lines: the probability map thresholded, split into bands of
    rows, each band's column extent (horizontal lines, as rendered here)."""
    w, h = img.size
    W, H = (w + 31) // 32 * 32, (h + 31) // 32 * 32
    a = np.asarray(img.resize((W, H)), np.float32) / 255.0
    a = (a - np.array([0.485, 0.456, 0.406], np.float32)) / np.array([0.229, 0.224, 0.225], np.float32)
    prob = det.run({det.inputs[0].name: np.ascontiguousarray(a.transpose(2, 0, 1)[None])})
    mask = next(iter(prob.values()))[0, 0] > thresh
    rows = np.flatnonzero(mask.any(axis=1))
    boxes = []
    if rows.size:
        for band in np.split(rows, np.flatnonzero(np.diff(rows) > 1) + 1):
            cols = np.flatnonzero(mask[band[0]:band[-1] + 1].any(axis=0))
            pad = (band[-1] - band[0] + 1) * 0.6  # the map shrinks text regions: grow them back
            x0, x1, y0, y1 = cols[0] - pad, cols[-1] + pad, band[0] - pad, band[-1] + pad
            boxes.append(tuple(int(round(v)) for v in (max(0, x0 * w / W), max(0, y0 * h / H),
                                                       min(w, x1 * w / W), min(h, y1 * h / H))))
    return boxes


def recognize(rec, crop, chars):
    w = min(320, max(8, int(round(crop.width * 48.0 / crop.height))))
    a = np.full((48, 320, 3), 0.0, np.float32)
    a[:, :w] = (np.asarray(crop.resize((w, 48)), np.float32) / 255.0 - 0.5) / 0.5
    out = next(iter(rec.run({rec.inputs[0].name: np.ascontiguousarray(a.transpose(2, 0, 1)[None])}).values()))
    idx = out[0].argmax(axis=-1)
    text, prev = [], 0
    for i in idx:
        if i != prev and i != 0:
            text.append(chars[i] if i < len(chars) else "?")
        prev = i
    return "".join(text)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--det", required=True)
    ap.add_argument("--rec", required=True)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--text", nargs="+", default=["lowconv reads 4 bit weights", "Invoice 2026-12-01 total 42.50"])
    a = ap.parse_args()
    import onnx
    meta = {p.key: p.value for p in onnx.load(a.rec, load_external_data=False).metadata_props}
    chars = ["<blank>"] + meta["character"].splitlines() + [" "]
    img = render(a.text)
    t = time.perf_counter()
    det = lowconv.Model(a.det, threads=a.threads, shapes={"x": (1, 3, (img.height + 31) // 32 * 32,
                                                                (img.width + 31) // 32 * 32)})
    rec = lowconv.Model(a.rec, threads=a.threads, shapes={"x": (1, 3, 48, 320)})
    boxes = detect(det, img)
    got = [recognize(rec, img.crop(b), chars) for b in boxes]
    ms = (time.perf_counter() - t) * 1e3
    for b, s in zip(boxes, got):
        print("%-22s %s" % (b, s))
    import difflib
    want, have = "".join(a.text).replace(" ", ""), "".join(got).replace(" ", "")  # the model drops spaces
    print("%d lines, %.0f ms (load + run); match with the rendered text (spaces aside): %.1f %%" % (
        len(boxes), ms, 100 * difflib.SequenceMatcher(None, want, have).ratio()))


if __name__ == "__main__":
    main()
