"""Calibration inputs: .npy files checked against the model's input, or generated images: rendered
text lines (OCR recognizers / classifiers) and natural-image-like scenes (detectors), normalized
as PP-OCR normalizes, (x / 255 - 0.5) / 0.5, NCHW float32."""
import numpy as np

_CHARS = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz.,:-/()%$#&"


def _font(size):
    from PIL import ImageFont
    try:
        return ImageFont.load_default(size=size)  # scalable default font (Pillow >= 10.1)
    except TypeError:
        return ImageFont.load_default()


def _words(r, n):
    return " ".join("".join(r.choice(list(_CHARS), size=int(r.integers(2, 9)))) for _ in range(n))


def text_line(r, h, w):
    """One dark-on-light (sometimes light-on-dark) text line, rendered larger and resized to h x w."""
    from PIL import Image, ImageDraw, ImageFilter
    scale = 3
    H, W = h * scale, w * scale
    bg = r.integers(150, 256, size=3)
    fg = r.integers(0, 90, size=3)
    if r.random() < 0.2:
        bg, fg = 255 - bg, 255 - fg
    img = Image.new("RGB", (W, H), tuple(int(v) for v in bg))
    d = ImageDraw.Draw(img)
    size = int(H * r.uniform(0.55, 0.8))
    text = _words(r, int(r.integers(2, 6)))
    d.text((int(r.integers(0, max(1, W // 20))), int((H - size) * r.uniform(0.2, 0.6))), text,
           fill=tuple(int(v) for v in fg), font=_font(size))
    img = img.resize((w, h), Image.BILINEAR)
    if r.random() < 0.5:
        img = img.filter(ImageFilter.GaussianBlur(r.uniform(0.2, 0.8)))
    a = np.asarray(img, np.float32) + r.normal(0, 4, size=(h, w, 3)).astype(np.float32)
    return np.clip(a, 0, 255)


def scene(r, h, w):
    """Sky/ground gradients, textured blobs, boxes and a few text blocks (what detectors see)."""
    from PIL import Image, ImageDraw, ImageFilter
    y = np.linspace(0, 1, h, dtype=np.float32)[:, None, None]
    top, bottom = r.uniform(60, 230, size=3), r.uniform(20, 200, size=3)
    a = (top * (1 - y) + bottom * y) * np.ones((1, w, 1), np.float32)
    img = Image.fromarray(a.astype(np.uint8))
    d = ImageDraw.Draw(img)
    for _ in range(int(r.integers(4, 12))):
        x0, y0 = int(r.integers(0, w)), int(r.integers(0, h))
        x1, y1 = x0 + int(r.integers(w // 16, w // 2)), y0 + int(r.integers(h // 16, h // 2))
        col = tuple(int(v) for v in r.integers(0, 256, size=3))
        (d.ellipse if r.random() < 0.5 else d.rectangle)([x0, y0, x1, y1], fill=col)
    for _ in range(int(r.integers(3, 7))):  # signs and labels: what a text detector is for
        size = int(r.integers(max(10, h // 24), max(11, h // 8)))
        x0, y0 = int(r.integers(0, w * 3 // 4)), int(r.integers(0, h * 7 // 8))
        lum = r.integers(0, 256)
        if r.random() < 0.5:  # on a plate of contrasting colour
            d.rectangle([x0 - 4, y0 - 2, x0 + size * 5, y0 + size + 4], fill=tuple(int(v) for v in [255 - lum] * 3))
        d.text((x0, y0), _words(r, int(r.integers(1, 4))), fill=tuple(int(v) for v in [lum] * 3), font=_font(size))
    img = img.filter(ImageFilter.GaussianBlur(r.uniform(0.3, 1.2)))
    a = np.asarray(img, np.float32)
    a = a + r.normal(0, 6, size=a.shape).astype(np.float32)  # sensor noise / texture
    return np.clip(a, 0, 255)


def generate(kind, shape, n, seed=0):
    """n NCHW float32 images of shape [1, 3, H, W] (kind 'text' or 'scene'), or for kind 'noise'
    n standard normal arrays of any shape with batch 1 (inputs that are not images)."""
    r = np.random.default_rng(seed)
    if kind == "noise":
        if any(not isinstance(d, int) or d <= 0 for d in shape):
            raise ValueError("lowconv: generated calibration needs a fixed input shape, got %s" % (shape,))
        return [r.standard_normal([1] + list(shape[1:])).astype(np.float32) for _ in range(n)]
    if len(shape) != 4 or shape[1] != 3:
        raise ValueError("lowconv: generated calibration needs a [N, 3, H, W] image input, got %s" % (shape,))
    fn = {"text": text_line, "scene": scene}[kind]
    out = []
    for _ in range(n):
        a = fn(r, int(shape[2]), int(shape[3]))
        out.append(np.ascontiguousarray(((a / 255.0 - 0.5) / 0.5).transpose(2, 0, 1)[None], dtype=np.float32))
    return out


def load_npy(paths, info):
    """Calibration samples from .npy files for a one-input model: each file holds one sample
    (the input's shape, or without the batch dim) or a stack of samples along dim 0."""
    name, dtype, shape = info
    samples = []
    for p in paths:
        try:
            a = np.load(p, allow_pickle=False)
        except Exception as e:
            raise ValueError("lowconv: calibration file %s: %s" % (p, e)) from None
        if a.dtype != dtype:
            raise ValueError("lowconv: calibration file %s has dtype %s; input %r takes %s" % (p, a.dtype, name, dtype))
        nd = len(shape)
        if a.ndim == nd - 1:
            a = a[None]
        if a.ndim != nd or any(isinstance(d, int) and d > 0 and d != s for d, s in zip(shape[1:], a.shape[1:])):
            raise ValueError("lowconv: calibration file %s has shape %s; input %r is %s" % (p, a.shape, name,
                                                                                     tuple(shape)))
        if not np.isfinite(a).all():
            raise ValueError("lowconv: calibration file %s holds NaN or Inf" % p)
        samples.extend(np.ascontiguousarray(a[i:i + 1]) for i in range(a.shape[0]))
    return samples
