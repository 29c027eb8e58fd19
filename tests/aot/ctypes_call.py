"""Loads a generated pipeline built as a shared library and calls it through ctypes with
DLTensors made by hand, as scripts/torch_aot_check.py does with PyTorch's: the library and
its C interface work from another language with nothing but the runtime.

    python3 ctypes_call.py path/to/libaot_rms_norm_shared.so
"""
import ctypes
import math
import random
import sys


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


def tensor(values, shape):
    data = (ctypes.c_float * len(values))(*values)
    dims = (ctypes.c_int64 * len(shape))(*shape)
    t = DLTensor(ctypes.cast(data, ctypes.c_void_p), DLDevice(1, 0), len(shape),
                 DLDataType(2, 32, 1), dims, None, 0)
    return t, data, dims


def main():
    lib = ctypes.CDLL(sys.argv[1])
    lib.aot_rms_norm.restype = ctypes.c_int
    lib.aot_rms_norm.argtypes = [ctypes.POINTER(DLTensor), ctypes.POINTER(DLTensor),
                                 ctypes.c_float, ctypes.POINTER(DLTensor)]
    lib.aicf_last_error.restype = ctypes.c_char_p
    rows, cols = 5, 77
    rng = random.Random(3)
    x = [rng.uniform(-2, 2) for _ in range(rows * cols)]
    w = [rng.uniform(0.5, 1.5) for _ in range(cols)]
    tx, _, _ = tensor(x, [rows, cols])
    tw, _, _ = tensor(w, [cols])
    tout, out, _ = tensor([0.0] * (rows * cols), [rows, cols])
    code = lib.aot_rms_norm(ctypes.byref(tx), ctypes.byref(tw), 1e-5, ctypes.byref(tout))
    if code != 0:
        print("failed:", lib.aicf_last_error().decode())
        return 1
    worst = 0.0
    for r in range(rows):
        row = x[r * cols:(r + 1) * cols]
        scale = 1.0 / math.sqrt(sum(v * v for v in row) / cols + 1e-5)
        for c in range(cols):
            worst = max(worst, abs(out[r * cols + c] - row[c] * scale * w[c]))
    # A wrong call from Python: a code and the message.
    tx.dtype.bits = 64
    bad = lib.aot_rms_norm(ctypes.byref(tx), ctypes.byref(tw), 1e-5, ctypes.byref(tout))
    message = lib.aicf_last_error().decode()
    print(f"largest error {worst:.2e}; a float64 input: code {bad}, \"{message}\"")
    ok = worst < 1e-5 and bad != 0 and "float64" in message
    print("ok" if ok else "WRONG")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
