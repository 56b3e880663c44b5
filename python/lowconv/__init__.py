"""lowconv: fast, low-memory CNN inference (ctypes bindings over the C library).

    m = lowconv.Model("model.onnx", threads=2, weights="q4")
    out = m.run({"x": x})          # dict name -> ndarray
    m.profile()                    # per-layer times of the last run

Library failures raise lowconv.Error carrying lowconv's own message (lc_last_error).
"""
import ctypes as C
import os
import sys

import numpy as np

from ._capi import MAX_DIMS, ConvDesc, ConvShape, ContextParams, NetBuffer, NetIO, NetLayerInfo, \
    NetMemoryInfo, NetOptions, NetShape, lib

__all__ = ["Error", "Model", "TensorInfo", "conv2d", "quantize", "version"]
__version__ = "0.1.0"

_STATUS = ["ok", "invalid argument", "overflow", "unsupported", "budget", "out of memory", "state", "io",
           "internal"]


class Error(RuntimeError):
    """A lowconv call failed: .status is the lc_status number, .status_name its name, str() the message."""

    def __init__(self, status, message):
        self.status = int(status)
        self.status_name = _STATUS[status] if 0 <= status < len(_STATUS) else str(status)
        super().__init__(message)


def _check(status, what=""):
    if status:
        msg = (lib.lc_last_error() or b"").decode("utf-8", "replace")
        raise Error(status, msg or "%s failed (%s)" % (what, _STATUS[status] if status < len(_STATUS) else status))


def version():
    return __version__


# ONNX element type numbers (lc_elem_type) <-> numpy
_DTYPES = {1: np.float32, 2: np.uint8, 3: np.int8, 6: np.int32, 7: np.int64, 9: np.bool_, 10: np.float16,
           11: np.float64}
_WEIGHTS = {"f32": 0, "fp32": 0, "q8": 1, "q4": 2}
_POLICY = {"mixed": 0, "all": 1, "plan": 2}
_LAYOUT = {"auto": 0, "nchw": 1, "nhwc": 2}
_ACT = {None: 0, "none": 0, "relu": 1, "clip": 2, "leaky_relu": 3, "hard_swish": 4, "prelu": 5}


def _bytes_arg(v, what):
    """Byte counts as int or with a K/M/G suffix ("2M")."""
    if v is None:
        return 0
    if isinstance(v, str):
        s = v.strip().upper()
        mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(s[-1:], 1)
        try:
            n = int(float(s[:-1] if mult > 1 else s) * mult)
        except ValueError:
            raise ValueError("lowconv: %s = %r is not a byte count (e.g. 4096, '2M')" % (what, v)) from None
    else:
        n = int(v)
    if n < 0:
        raise ValueError("lowconv: %s = %d is negative" % (what, n))
    return n


def _choice(table, v, what):
    key = v.lower() if isinstance(v, str) else v
    if key not in table:
        raise ValueError("lowconv: %s = %r (one of %s)" % (what, v, ", ".join(str(k) for k in table if k)))
    return table[key]


class TensorInfo:
    """A graph input or output: name, numpy dtype, shape (ints; a str names a symbolic dim, None = unknown)."""
    __slots__ = ("name", "dtype", "shape", "nbytes")

    def __init__(self, io):
        self.name = io.name.decode()
        self.dtype = np.dtype(_DTYPES[io.type]) if io.type in _DTYPES else None
        if io.ndim < 0:
            self.shape = None
        else:
            self.shape = tuple(int(io.dims[d]) if io.dims[d] >= 0 else
                               (io.dim_names[d].decode() if io.dim_names[d] else None) for d in range(io.ndim))
        self.nbytes = int(io.bytes)

    def __repr__(self):
        return "TensorInfo(%r, %s, %s)" % (self.name, self.dtype, self.shape)


class Model:
    """An ONNX model loaded by lowconv (path, or bytes holding the file).

    device: "cpu" or "opencl"; threads: worker threads; weights: "f32", "q8", "q4" or "q4:fast"
    (Conv/Gemm/MatMul storage; ignored for layers the file already stores quantized); block:
    quantization block of input channels (0 = per output channel); budget: scratch bytes any one
    conv may use (int or "2M"); q4_policy: "plan" (default: lowconv quantize's per-layer choice,
    made at the first load of a file and cached; `weights_plan` says which was used), "mixed" (the
    quick rule; weights="q4:fast" is q4 with it) or "all"; shapes: {input: shape} fixing symbolic
    dims; max_memory: cap on the plan's memory (0 = a quarter of RAM); layout: "auto" (fp32 convs
    that feed each other run channels-last where it pays), "nchw" or "nhwc" (CPU; inputs and
    outputs stay NCHW).
    """

    def __init__(self, path, device="cpu", threads=1, weights="f32", block=0, budget=0, q4_policy="plan",
                 shapes=None, max_memory=0, no_fusion=False, layout="auto"):
        self._net = None
        if weights == "q4:fast":
            weights, q4_policy = "q4", "mixed"
        if weights == "q4" and q4_policy == "plan":
            os.environ.setdefault("LOWCONV_PYTHON", sys.executable)  # the quantizer runs in this interpreter
        o = NetOptions()
        lib.lc_net_options_init(C.byref(o))
        o.threads = int(threads)
        o.workspace_budget = _bytes_arg(budget, "budget")
        o.weight_format = _choice(_WEIGHTS, weights, "weights")
        o.weight_block = int(block)
        o.q4_policy = _choice(_POLICY, q4_policy, "q4_policy")
        o.max_memory = _bytes_arg(max_memory, "max_memory")
        o.no_fusion = 1 if no_fusion else 0
        o.layout = _choice(_LAYOUT, layout, "layout")
        self._device = device.encode() if isinstance(device, str) else device
        o.device = self._device
        if shapes:
            arr = (NetShape * len(shapes))()
            self._shape_names = []
            for k, (name, shp) in enumerate(shapes.items()):
                shp = tuple(int(d) for d in shp)
                if len(shp) > MAX_DIMS:
                    raise ValueError("lowconv: shape of %r has %d dims (at most %d)" % (name, len(shp), MAX_DIMS))
                self._shape_names.append(name.encode())
                arr[k].name = self._shape_names[-1]
                arr[k].ndim = len(shp)
                for d, v in enumerate(shp):
                    arr[k].dims[d] = v
            o.shapes = arr
            o.n_shapes = len(shapes)
        net = C.c_void_p()
        if isinstance(path, (bytes, bytearray, memoryview)):  # the file's contents
            buf = bytes(path)
            _check(lib.lc_net_load_memory(buf, len(buf), C.byref(o), C.byref(net)), "load")
        else:
            _check(lib.lc_net_load(str(path).encode(), C.byref(o), C.byref(net)), "load")
        self._net = net
        self._prepared = False
        self._refresh()

    def __del__(self):
        self.close()

    @property
    def weights_plan(self):
        """How the q4 precision was chosen at load ("plan (cached): ...", "quick rule (...)"), or ""."""
        return lib.lc_net_weights_plan(self._handle()).decode()

    def close(self):
        if getattr(self, "_net", None):
            lib.lc_net_free(self._net)
            self._net = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _handle(self):
        if not self._net:
            raise Error(6, "lowconv: the model was closed")
        return self._net

    def _refresh(self):
        net = self._handle()
        io = NetIO()
        ins, outs = [], []
        for i in range(lib.lc_net_n_inputs(net)):
            _check(lib.lc_net_input_info(net, i, C.byref(io)))
            ins.append(TensorInfo(io))
        for i in range(lib.lc_net_n_outputs(net)):
            _check(lib.lc_net_output_info(net, i, C.byref(io)))
            outs.append(TensorInfo(io))
        self._inputs, self._outputs = ins, outs
        self._in_index = {t.name: i for i, t in enumerate(ins)}
        self._out_index = {t.name: i for i, t in enumerate(outs)}
        if self._prepared:
            # what run() checks and fills, built once: the per-run path only swaps pointers
            self._in_buf = (NetBuffer * len(ins))()
            self._out_buf = (NetBuffer * len(outs))()
            self._in_check = []
            for i, t in enumerate(ins):
                self._in_buf[i].index = i
                self._in_buf[i].bytes = t.nbytes
                self._in_check.append((t.name, t.dtype, t.shape))
            for i, t in enumerate(outs):
                self._out_buf[i].index = i
                self._out_buf[i].bytes = t.nbytes
            self._all_out = [(i, t.name, t.shape, t.dtype) for i, t in enumerate(outs)]
            # the buffers' data fields as integers: setting one costs less than a ctypes field store
            words = C.sizeof(NetBuffer) // 8
            self._in_ptrs = np.frombuffer(self._in_buf, np.uint64).reshape(-1, words)[:, NetBuffer.data.offset // 8] \
                if ins else np.zeros(0, np.uint64)
            self._out_ptrs = np.frombuffer(self._out_buf, np.uint64).reshape(-1, words)[:, NetBuffer.data.offset // 8] \
                if outs else np.zeros(0, np.uint64)

    @property
    def inputs(self):
        return list(self._inputs)

    @property
    def outputs(self):
        return list(self._outputs)

    def prepare(self, shapes=None):
        """Fixes symbolic input dims ({name: shape}) and plans the network; run() calls it if needed."""
        net = self._handle()
        if self._prepared:
            if shapes:
                raise Error(6, "lowconv: the model is already prepared (shapes are fixed once)")
            return
        for name, shp in (shapes or {}).items():
            shp = tuple(int(d) for d in shp)
            if len(shp) > MAX_DIMS:
                raise ValueError("lowconv: shape of %r has %d dims (at most %d)" % (name, len(shp), MAX_DIMS))
            dims = (C.c_int64 * max(1, len(shp)))(*shp)
            _check(lib.lc_net_set_input_shape(net, str(name).encode(), len(shp), dims))
        _check(lib.lc_net_prepare(net), "prepare")
        self._prepared = True
        self._refresh()

    def _first_prepare(self, feeds):
        shapes = {}
        for t in self._inputs:
            a = feeds.get(t.name)
            if isinstance(a, np.ndarray) and t.shape is not None and any(not isinstance(d, int) for d in t.shape):
                shapes[t.name] = a.shape
        self.prepare(shapes)

    def _bad_input(self, name, a, dtype, shape):
        if not isinstance(a, np.ndarray):
            return "input %r: expected a numpy.ndarray, got %s" % (name, type(a).__name__)
        if a.dtype != dtype:
            return "input %r: dtype %s, the model takes %s (convert with .astype(np.%s))" % (
                name, a.dtype, dtype, dtype.name)
        if a.shape != shape:
            return "input %r: shape %s, the model was prepared for %s" % (name, a.shape, shape)
        if not a.flags.c_contiguous:
            return "input %r: array is not C-contiguous (strides %s); pass np.ascontiguousarray(x)" % (
                name, a.strides)
        return None

    def run(self, feeds, outputs=None):
        """Runs the model. feeds: {name: ndarray} (or one ndarray for a one-input model), used in place
        (no copy) when C-contiguous with the model's dtype and shape; anything else raises ValueError.
        Returns {output name: ndarray} for `outputs` (names; default all), each a new array the
        library writes into directly."""
        if type(feeds) is not dict:
            if isinstance(feeds, np.ndarray) and len(self._inputs) == 1:
                feeds = {self._inputs[0].name: feeds}
            elif isinstance(feeds, dict):
                feeds = dict(feeds)
            else:
                raise TypeError("lowconv: run() takes a dict {input name: ndarray}")
        if not self._prepared:
            self._first_prepare(feeds)
        net = self._net
        if net is None:
            self._handle()
        if len(feeds) != len(self._in_check):
            self._feed_names_error(feeds)
        ptrs = self._in_ptrs
        for i, (name, dtype, shape) in enumerate(self._in_check):
            a = feeds.get(name)
            if type(a) is not np.ndarray or a.dtype != dtype or a.shape != shape or not a.flags.c_contiguous:
                if a is None:
                    self._feed_names_error(feeds)
                msg = self._bad_input(name, a, dtype, shape)
                if msg:
                    raise ValueError("lowconv: " + msg)
            ptrs[i] = _address(a)
        sel = self._all_out if outputs is None else self._select(outputs)
        res = {}
        optrs = self._out_ptrs
        for k, (i, name, shape, dtype) in enumerate(sel):
            arr = np.empty(shape, dtype)
            res[name] = arr
            optrs[k] = _address(arr)
        if outputs is not None:
            for k, (i, _, _, _) in enumerate(sel):
                self._out_buf[k].index = i
                self._out_buf[k].bytes = self._outputs[i].nbytes
        st = lib.lc_net_run(net, self._in_buf, len(ptrs), self._out_buf, len(sel))
        if outputs is not None:  # back to the all-outputs order
            for k, t in enumerate(self._outputs):
                self._out_buf[k].index = k
                self._out_buf[k].bytes = t.nbytes
        if st:
            _check(st, "run")
        return res

    def _select(self, outputs):
        if isinstance(outputs, str):
            outputs = [outputs]
        sel = []
        for n in outputs:
            if n not in self._out_index:
                raise ValueError("lowconv: no output %r (outputs: %s)" % (n, list(self._out_index)))
            sel.append(self._all_out[self._out_index[n]])
        return sel

    def _feed_names_error(self, feeds):
        names = [c[0] for c in self._in_check]
        missing = [n for n in names if n not in feeds]
        extra = [n for n in feeds if n not in self._in_index]
        raise ValueError("lowconv: inputs missing: %s, unknown: %s (the model takes %s)" % (missing, extra, names))

    def profile(self):
        """Per executed node: name, op_type, route, fused, shape, ms (last run), flops, workspace_bytes."""
        net = self._handle()
        if not self._prepared:
            raise Error(6, "lowconv: profile() before the model was prepared or run")
        info = NetLayerInfo()
        rows = []
        for i in range(lib.lc_net_n_layers(net)):
            _check(lib.lc_net_layer(net, i, C.byref(info)))
            rows.append({"name": (info.name or b"").decode(), "op_type": (info.op_type or b"").decode(),
                         "route": (info.route or b"").decode(), "fused": info.fused.decode(),
                         "shape": tuple(info.dims[d] for d in range(max(info.ndim, 0))), "ms": info.ms,
                         "flops": info.flops, "workspace_bytes": int(info.workspace_bytes)})
        return rows

    def memory(self):
        """Bytes of the prepared plan: weight_bytes, packed_weight_bytes, activation_bytes, scratch_bytes."""
        net = self._handle()
        if not self._prepared:
            self.prepare()
        m = NetMemoryInfo()
        _check(lib.lc_net_memory(net, C.byref(m)))
        return {k: int(getattr(m, k)) for k, _ in NetMemoryInfo._fields_}


_byte = C.c_byte
_addressof = C.addressof


def _address(a):
    """Data pointer of an ndarray; c_byte.from_buffer is several times cheaper than a.ctypes.data."""
    try:
        return _addressof(_byte.from_buffer(a))
    except (TypeError, ValueError):  # read-only or empty arrays
        return a.ctypes.data


def _pair(v, what):
    if isinstance(v, (int, np.integer)):
        return int(v), int(v)
    v = tuple(int(x) for x in v)
    if len(v) != 2:
        raise ValueError("lowconv: %s = %r (an int or two ints)" % (what, v))
    return v


_contexts = {}


def _context(threads, budget):
    key = (threads, budget)
    ctx = _contexts.get(key)
    if ctx is None:
        p = ContextParams()
        lib.lc_context_params_init(C.byref(p))
        p.threads = threads
        p.workspace_budget = budget
        h = C.c_void_p()
        _check(lib.lc_context_create(C.byref(p), C.byref(h)), "context")
        ctx = _contexts[key] = h
    return ctx


def _f32_array(a, what, ndim):
    if not isinstance(a, np.ndarray):
        raise TypeError("lowconv: %s must be a numpy.ndarray, got %s" % (what, type(a).__name__))
    if a.dtype != np.float32:
        raise ValueError("lowconv: %s has dtype %s; conv2d takes float32" % (what, a.dtype))
    if a.ndim != ndim:
        raise ValueError("lowconv: %s has %d dims (%d expected)" % (what, a.ndim, ndim))
    if not a.flags.c_contiguous:
        raise ValueError("lowconv: %s is not C-contiguous; pass np.ascontiguousarray(...)" % what)
    return a


def conv2d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1, activation=None, weights="f32",
           block=0, threads=1, budget=0, route="auto", act_min=0.0, act_max=6.0, alpha=0.01, slopes=None,
           residual=None, pad_values=None):
    """One 2-D convolution, NCHW float32: x [N, C, H, W], weight [O, C/groups, kh, kw], bias [O].
    padding: int, (h, w) or (top, left, bottom, right); activation: None, "relu", "clip", "leaky_relu",
    "hard_swish", "prelu" (slopes [O]); residual: the output's shape, added before the activation;
    pad_values: [C], what the padding reads per input channel (default 0; routes winograd,
    winograd4 and direct);
    weights: "f32", "q8", "q4" (quantized from `weight`, block of input channels)."""
    x = _f32_array(x, "x", 4)
    weight = _f32_array(weight, "weight", 4)
    n, c, h, w = x.shape
    o, ci, kh, kw = weight.shape
    if ci * int(groups) != c:
        raise ValueError("lowconv: weight has %d input channels per group; x has %d channels in %d groups" % (
            ci, c, groups))
    if bias is not None:
        bias = _f32_array(bias, "bias", 1)
        if bias.shape[0] != o:
            raise ValueError("lowconv: bias has %d values for %d output channels" % (bias.shape[0], o))
    d = ConvDesc()
    lib.lc_conv_desc_init(C.byref(d))
    d.in_channels, d.out_channels, d.groups, d.kernel_h, d.kernel_w = c, o, int(groups), kh, kw
    d.stride_h, d.stride_w = _pair(stride, "stride")
    d.dilation_h, d.dilation_w = _pair(dilation, "dilation")
    if isinstance(padding, (int, np.integer)) or len(padding) == 2:
        ph, pw = _pair(padding, "padding")
        pads = (ph, pw, ph, pw)
    else:
        pads = tuple(int(p) for p in padding)
        if len(pads) != 4:
            raise ValueError("lowconv: padding = %r (int, (h, w) or (top, left, bottom, right))" % (padding,))
    d.pad_top, d.pad_left, d.pad_bottom, d.pad_right = pads
    d.weights = weight.ctypes.data
    d.bias = bias.ctypes.data if bias is not None else None
    d.activation = _choice(_ACT, activation, "activation")
    d.act_min, d.act_max, d.act_alpha = act_min, act_max, alpha
    if d.activation == _ACT["prelu"]:
        if slopes is None:
            raise ValueError("lowconv: activation 'prelu' needs slopes [%d]" % o)
        slopes = _f32_array(slopes, "slopes", 1)
        if slopes.shape[0] != o:
            raise ValueError("lowconv: slopes has %d values for %d output channels" % (slopes.shape[0], o))
        d.act_slopes = slopes.ctypes.data
    if pad_values is not None:
        pad_values = _f32_array(pad_values, "pad_values", 1)
        if pad_values.shape[0] != c:
            raise ValueError("lowconv: pad_values has %d values for %d input channels" % (pad_values.shape[0], c))
        d.pad_values = pad_values.ctypes.data
    r = 0 if route in (None, "auto") else lib.lc_route_from_name(str(route).encode())
    if r < 0:
        raise ValueError("lowconv: route %r unknown" % (route,))
    d.route = r
    d.weight_format = _choice(_WEIGHTS, weights, "weights")
    d.block_size = int(block)
    ctx = _context(int(threads), _bytes_arg(budget, "budget"))
    conv = C.c_void_p()
    _check(lib.lc_conv_create(ctx, C.byref(d), C.byref(conv)), "conv create")
    try:
        sh = ConvShape()
        _check(lib.lc_conv_prepare(conv, n, h, w, C.byref(sh)), "conv prepare")
        out = np.empty((n, o, sh.out_h, sh.out_w), np.float32)
        if residual is None:
            _check(lib.lc_conv_run(conv, x.ctypes.data, out.ctypes.data, None, 0), "conv run")
        else:
            residual = _f32_array(residual, "residual", 4)
            if residual.shape != out.shape:
                raise ValueError("lowconv: residual has shape %s for an output of %s" % (residual.shape, out.shape))
            _check(lib.lc_conv_run_residual(conv, x.ctypes.data, residual.ctypes.data, out.ctypes.data, None, 0),
                   "conv run")
    finally:
        lib.lc_conv_destroy(conv)
    return out


def quantize(model, output, **kw):
    """Quantizes an ONNX model's Conv/Gemm/MatMul weights per layer to reach a target output cosine;
    writes a standard ONNX file (DequantizeLinear, external data). See lowconv.quantizer.quantize_model."""
    from .quantizer import quantize_model
    return quantize_model(model, output, **kw)
