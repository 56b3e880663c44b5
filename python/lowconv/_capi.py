"""ctypes declarations of the public C API (include/lowconv.h, include/lowconv_model.h).

Layouts here must match the headers; tests/py_test_python.py compiles a C program that prints
every struct's size and field offsets and compares them with these.
"""
import ctypes as C
import os
import sys

MAX_DIMS = 8


class NetShape(C.Structure):
    _fields_ = [("name", C.c_char_p), ("ndim", C.c_int), ("dims", C.c_int64 * MAX_DIMS)]


class NetOptions(C.Structure):
    _fields_ = [
        ("threads", C.c_int),
        ("workspace_budget", C.c_size_t),
        ("weight_format", C.c_int),
        ("weight_block", C.c_int),
        ("q4_policy", C.c_int),
        ("max_memory", C.c_size_t),
        ("no_fusion", C.c_int),
        ("device", C.c_char_p),
        ("shapes", C.POINTER(NetShape)),
        ("n_shapes", C.c_int),
        ("layout", C.c_int),
    ]


class NetIO(C.Structure):
    _fields_ = [
        ("name", C.c_char_p),
        ("type", C.c_int),
        ("ndim", C.c_int),
        ("dims", C.c_int64 * MAX_DIMS),
        ("dim_names", C.c_char_p * MAX_DIMS),
        ("bytes", C.c_size_t),
    ]


class NetBuffer(C.Structure):
    _fields_ = [("name", C.c_char_p), ("index", C.c_int), ("data", C.c_void_p), ("bytes", C.c_size_t)]


class NetLayerInfo(C.Structure):
    _fields_ = [
        ("name", C.c_char_p),
        ("op_type", C.c_char_p),
        ("route", C.c_char_p),
        ("fused", C.c_char * 48),
        ("ndim", C.c_int),
        ("dims", C.c_int64 * MAX_DIMS),
        ("ms", C.c_double),
        ("flops", C.c_double),
        ("workspace_bytes", C.c_size_t),
    ]


class NetMemoryInfo(C.Structure):
    _fields_ = [
        ("weight_bytes", C.c_size_t),
        ("packed_weight_bytes", C.c_size_t),
        ("activation_bytes", C.c_size_t),
        ("scratch_bytes", C.c_size_t),
    ]


class ContextParams(C.Structure):
    _fields_ = [
        ("threads", C.c_int),
        ("workspace_budget", C.c_size_t),
        ("isa", C.c_int),
        ("backend", C.c_int),
        ("cl_platform", C.c_int),
        ("cl_device", C.c_int),
        ("cache_dir", C.c_char_p),
        ("tune", C.c_int),
        ("cpu_tune", C.c_int),
    ]


class ConvDesc(C.Structure):
    _fields_ = [
        ("in_channels", C.c_int64),
        ("out_channels", C.c_int64),
        ("groups", C.c_int64),
        ("kernel_h", C.c_int64),
        ("kernel_w", C.c_int64),
        ("stride_h", C.c_int64),
        ("stride_w", C.c_int64),
        ("dilation_h", C.c_int64),
        ("dilation_w", C.c_int64),
        ("pad_top", C.c_int64),
        ("pad_left", C.c_int64),
        ("pad_bottom", C.c_int64),
        ("pad_right", C.c_int64),
        ("auto_pad", C.c_int),
        ("layout", C.c_int),
        ("weights", C.c_void_p),
        ("bias", C.c_void_p),
        ("activation", C.c_int),
        ("act_min", C.c_float),
        ("act_max", C.c_float),
        ("act_alpha", C.c_float),
        ("route", C.c_int),
        ("weight_format", C.c_int),
        ("block_size", C.c_int),
        ("asym", C.c_int),
        ("int8_activations", C.c_int),
        ("q_codes", C.c_void_p),
        ("q_scales", C.c_void_p),
        ("q_offsets", C.c_void_p),
        ("post_mul", C.c_float),
        ("post_add", C.c_float),
        ("act_slopes", C.c_void_p),
        ("pad_values", C.c_void_p),
    ]


class ConvShape(C.Structure):
    _fields_ = [
        ("batch", C.c_int64),
        ("in_h", C.c_int64),
        ("in_w", C.c_int64),
        ("out_h", C.c_int64),
        ("out_w", C.c_int64),
        ("route", C.c_int),
        ("workspace_bytes", C.c_size_t),
    ]


STRUCTS = {
    "lc_net_shape": NetShape,
    "lc_net_options": NetOptions,
    "lc_net_io": NetIO,
    "lc_net_buffer": NetBuffer,
    "lc_net_layer_info": NetLayerInfo,
    "lc_net_memory_info": NetMemoryInfo,
    "lc_context_params": ContextParams,
    "lc_conv_desc": ConvDesc,
    "lc_conv_shape": ConvShape,
}


def _find_library():
    env = os.environ.get("LOWCONV_LIBRARY")
    if env:
        return env
    here = os.path.dirname(os.path.abspath(__file__))
    for name in sorted(os.listdir(here)):
        if name.startswith("liblowconv.so"):
            return os.path.join(here, name)
    raise ImportError(
        "lowconv: the shared library liblowconv.so is not next to the package (%s); "
        "install with `pip install .` or set LOWCONV_LIBRARY" % here)


def _declare(lib):
    P, st, i, sz, vp = C.POINTER, C.c_int, C.c_int, C.c_size_t, C.c_void_p
    sigs = {
        "lc_last_error": (C.c_char_p, []),
        "lc_status_name": (C.c_char_p, [st]),
        "lc_elem_type_name": (C.c_char_p, [i]),
        "lc_net_options_init": (None, [P(NetOptions)]),
        "lc_net_load": (st, [C.c_char_p, P(NetOptions), P(vp)]),
        "lc_net_load_memory": (st, [vp, sz, P(NetOptions), P(vp)]),
        "lc_net_free": (None, [vp]),
        "lc_net_weights_plan": (C.c_char_p, [vp]),
        "lc_net_n_inputs": (i, [vp]),
        "lc_net_n_outputs": (i, [vp]),
        "lc_net_input_info": (st, [vp, i, P(NetIO)]),
        "lc_net_output_info": (st, [vp, i, P(NetIO)]),
        "lc_net_set_input_shape": (st, [vp, C.c_char_p, i, P(C.c_int64)]),
        "lc_net_prepare": (st, [vp]),
        "lc_net_run": (st, [vp, P(NetBuffer), i, P(NetBuffer), i]),
        "lc_net_n_layers": (i, [vp]),
        "lc_net_layer": (st, [vp, i, P(NetLayerInfo)]),
        "lc_net_memory": (st, [vp, P(NetMemoryInfo)]),
        "lc_context_params_init": (None, [P(ContextParams)]),
        "lc_context_create": (st, [P(ContextParams), P(vp)]),
        "lc_context_destroy": (None, [vp]),
        "lc_context_isa_name": (C.c_char_p, [vp]),
        "lc_device_parse": (st, [C.c_char_p, P(ContextParams)]),
        "lc_conv_desc_init": (None, [P(ConvDesc)]),
        "lc_conv_quant_blocks": (sz, [P(ConvDesc)]),
        "lc_conv_create": (st, [vp, P(ConvDesc), P(vp)]),
        "lc_conv_prepare": (st, [vp, C.c_int64, C.c_int64, C.c_int64, P(ConvShape)]),
        "lc_conv_run": (st, [vp, vp, vp, vp, sz]),
        "lc_conv_run_residual": (st, [vp, vp, vp, vp, vp, sz]),
        "lc_conv_destroy": (None, [vp]),
        "lc_conv_get_weights": (st, [vp, vp]),
        "lc_conv_weight_bytes": (sz, [vp]),
        "lc_route_name": (C.c_char_p, [i]),
        "lc_route_from_name": (i, [C.c_char_p]),
    }
    for name, (res, args) in sigs.items():
        f = getattr(lib, name)
        f.restype = res
        f.argtypes = args
    return lib


lib = _declare(C.CDLL(_find_library()))
