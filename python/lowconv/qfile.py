"""The quantized model file (docs/quantization.md, "The file"): quantized layers as UINT4 / INT8
initializers + DequantizeLinear (+ a Transpose for kernels larger than 1x1), a row-split class
layer as two branches + Concat + Gather (rowsplit.py); opset 21; external data next to the model.
And the plan as text for lowconv's load-time q4."""
import os

import numpy as np

from . import rowsplit as _rowsplit


def _onnx():
    try:
        import onnx
        from onnx import helper, numpy_helper
        return onnx, helper, numpy_helper
    except ImportError:
        raise ImportError("lowconv.quantize needs the onnx package (pip install onnx)") from None


def pack_int4(q):
    """ONNX INT4 / UINT4 raw data: nibbles (two's complement for INT4), element 2i in the low nibble of byte i."""
    u = (q.ravel().astype(np.int16) & 15).astype(np.uint8)
    if u.size % 2:
        u = np.append(u, np.uint8(0))
    return (u[0::2] | (u[1::2] << 4)).tobytes()


def _emit_dq(m, L, new_nodes, replace=None):
    """L's codes (L.q, format L.choice) as an initializer (in slot `replace`, else appended), its
    scales (+ zero point), and the DequantizeLinear (+ Transpose) making the weight named L.name."""
    _, helper, nh = _onnx()
    from onnx import TensorProto
    fmt, block = L.choice
    codes, scales = L.q[0], L.q[1]
    blk = L.eff_block(block)
    # Conv kernels larger than 1x1: codes as [O][kh][kw][I] (lowconv's row order, so it runs
    # from the mapped file as it is) and a Transpose to the OIHW the Conv takes.
    ohwi = L.kind == "conv" and L.taps > 1
    if ohwi:
        o, c, kh, kw = L.shape
        q = codes.astype(np.int8).reshape(o, kh, kw, c)
    else:
        q = L.from_mat(codes.astype(np.int8))
    if blk == 0:  # one scale per output channel: per-axis on the output axis
        axis = 0 if L.kind == "conv" or not L.trans else 1
        sc = scales[:, 0]
    else:
        nb = -(-L.kc // blk)
        if L.kind == "conv":
            o, c, kh, kw = L.shape
            sc = scales.reshape(o, kh, kw, nb)
            axis = 3
            if not ohwi:
                sc, axis = sc.transpose(0, 3, 1, 2), 1
        else:
            sc = scales.T if L.trans else scales
            axis = 0 if L.trans else 1
    qname, sname, wname = L.name + "_quantized", L.name + "_scale", L.name
    sc = np.ascontiguousarray(sc, dtype=np.float32)
    inputs = [qname, sname]
    if fmt == "q4":  # uint4 code + 8 with zero point 8: the nibbles lowconv's kernels read
        qt = helper.make_tensor(qname, TensorProto.UINT4, q.shape, pack_int4(q + 8), raw=True)
        zp = np.full(sc.shape, 8, np.uint8)
        m.graph.initializer.append(helper.make_tensor(L.name + "_zero_point", TensorProto.UINT4, zp.shape,
                                                      pack_int4(zp), raw=True))
        inputs.append(L.name + "_zero_point")
    else:
        qt = helper.make_tensor(qname, TensorProto.INT8, q.shape, q.tobytes(), raw=True)
    if replace is None:
        m.graph.initializer.append(qt)
    else:
        m.graph.initializer[replace].CopyFrom(qt)
    m.graph.initializer.append(nh.from_array(sc, sname))
    attrs = {"axis": axis}
    if blk:
        attrs["block_size"] = blk
    dq_out = wname + "_ohwi" if ohwi else wname
    new_nodes.append(helper.make_node("DequantizeLinear", inputs, [dq_out], name=L.name + "_dq", **attrs))
    if ohwi:
        new_nodes.append(helper.make_node("Transpose", [dq_out], [wname], name=L.name + "_oihw", perm=[0, 3, 1, 2]))


def write_model(model, layers, out_path):
    """Quantized layers become UINT4 (code + 8, zero point 8) / INT8 initializers + DequantizeLinear (+ a
    Transpose for kernels larger than 1x1, whose codes are [O][kh][kw][I]); opset 21; external data."""
    onnx, helper, nh = _onnx()
    from onnx import TensorProto, version_converter
    m = onnx.ModelProto()
    m.CopyFrom(model)
    ops = [o for o in m.opset_import if o.domain in ("", "ai.onnx")]
    if not ops or ops[0].version < 21:
        m = version_converter.convert_version(m, 21)
    inits = {t.name: i for i, t in enumerate(m.graph.initializer)}
    new_nodes = []
    qlayers = {L.name: L for L in layers if L.choice[0] != "f32"}
    for n in m.graph.node:
        if len(n.input) > 1 and n.input[1] in qlayers:
            L = qlayers[n.input[1]]
            if getattr(L, "split", None):  # rows in two formats: two branches, Concat, Gather
                _rowsplit.emit(m, L, n, _emit_dq, new_nodes, inits)
                continue
            _emit_dq(m, L, new_nodes, inits[L.name])
        new_nodes.append(n)
    del m.graph.node[:]
    m.graph.node.extend(new_nodes)
    d = os.path.dirname(os.path.abspath(out_path))
    os.makedirs(d, exist_ok=True)
    loc = os.path.basename(out_path) + ".data"
    if os.path.exists(os.path.join(os.path.dirname(os.path.abspath(out_path)), loc)):
        os.remove(os.path.join(os.path.dirname(os.path.abspath(out_path)), loc))
    onnx.save_model(m, out_path, save_as_external_data=True, all_tensors_to_one_file=True, location=loc,
                    size_threshold=1024)
    onnx.checker.check_model(out_path)
    return out_path


def write_plan(rep, path, counts):
    """The choice as lines lowconv's loader reads back (src/model/q4plan.c): a header, one
    summary line, then `layer NAME FORMAT BLOCK BYTES` per layer (whitespace in names as _)."""
    s = "%d layers (%s), weights %.3fx fp32, cosine %.5f" % (
        len(rep["layers"]), ", ".join("%s %d" % kv for kv in sorted(counts.items())),
        rep["weight_bytes"] / rep["fp32_weight_bytes"], rep["cosine_mean"])
    if rep["argmax_agreement"] is not None:
        s += ", argmax %.4f" % rep["argmax_agreement"]
    if not rep["target_met"]:
        s += ", target not met"
    lines = ["lowconv-q4plan 1", "summary " + s]
    lines += ["layer %s %s %d %d" % ("_".join(r["layer"].split()) or "_", r["format"], r["block"], r["bytes"])
              for r in rep["layers"]]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
