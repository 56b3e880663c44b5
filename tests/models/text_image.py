"""A synthetic text image for OCR models: dark glyph-like strokes (bars, dots, arcs) in lines of
"words" on a light, slightly noisy background, normalized as PP-OCR does: (x / 255 - 0.5) / 0.5."""
import numpy as np


def text_image(h, w, seed=0, line_h=None):
    rng = np.random.default_rng(seed)
    img = np.full((h, w), 235.0) + rng.normal(0, 4, (h, w))
    line_h = line_h or max(12, min(h // 2, 32))
    y = max(2, (h - line_h) // 2) if h < 2 * line_h else 6
    while y + line_h <= h - 2:
        x = int(rng.integers(4, 16))
        while x < w - line_h:
            for _ in range(int(rng.integers(2, 7))):  # one word
                gw = int(line_h * rng.uniform(0.4, 0.8))
                if x + gw >= w - 2:
                    break
                glyph(img, rng, y, x, line_h, gw)
                x += gw + 2
            x += line_h // 2
        y += int(line_h * 1.6)
    img = np.clip(img, 0, 255)
    tint = np.array([1.0, 0.97, 0.94]).reshape(3, 1, 1)  # slightly different channels (BGR-ish)
    x3 = np.clip(img[None] * tint, 0, 255)
    return ((x3 / 255.0 - 0.5) / 0.5).astype(np.float32)[None]


def glyph(img, rng, y, x, gh, gw):
    t = max(1, gh // 8)  # stroke width
    ink = rng.uniform(20, 60)
    for _ in range(int(rng.integers(2, 4))):
        kind = rng.integers(0, 3)
        if kind == 0:  # vertical bar
            cx = x + int(rng.integers(0, max(1, gw - t)))
            img[y:y + gh, cx:cx + t] = ink
        elif kind == 1:  # horizontal bar
            cy = y + int(rng.integers(0, max(1, gh - t)))
            img[cy:cy + t, x:x + gw] = ink
        else:  # ring
            yy, xx = np.mgrid[0:gh, 0:gw]
            r = ((yy - gh / 2) / (gh / 2)) ** 2 + ((xx - gw / 2) / (gw / 2)) ** 2
            sub = img[y:y + gh, x:x + gw]
            sub[(r > 0.55) & (r < 1.0)] = ink
