"""Calls a pipeline compiled ahead of time from PyTorch, through DLPack and ctypes.

    python3 scripts/torch_aot_check.py BUILD_DIR

loads BUILD_DIR/tests/libaot_rms_norm_shared.so (the generator rms_norm of
tests/aot/Generators.cpp, compiled for host-cuda-sm_80), runs it on CUDA tensors (used in
place) and on CPU tensors (copied to the GPU and back), and compares both with the same
normalization computed by PyTorch. Prints one table row per case; exits non-zero on a
mismatch or an error.
"""
import ctypes
import sys

import torch
import torch.utils.dlpack


def dltensor_pointer(tensor, keep):
    """The DLTensor * inside the capsule PyTorch's to_dlpack returns (a DLManagedTensor, whose
    first member is the DLTensor). The capsule is kept alive in `keep`."""
    capsule = torch.utils.dlpack.to_dlpack(tensor)
    keep.append(capsule)
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype = ctypes.c_void_p
    get.argtypes = [ctypes.py_object, ctypes.c_char_p]
    return ctypes.c_void_p(get(capsule, b"dltensor"))


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    lib = ctypes.CDLL(f"{build}/tests/libaot_rms_norm_shared.so")
    lib.aot_rms_norm.restype = ctypes.c_int
    lib.aot_rms_norm.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_float,
                                 ctypes.c_void_p]
    lib.aicf_last_error.restype = ctypes.c_char_p
    lib.aicf_set_cuda_stream.argtypes = [ctypes.c_void_p]
    ok = True
    print("| AOT from PyTorch | rows x cols | tensors | max abs error vs torch | result |")
    print("|---|---|---|---|---|")
    for rows, cols in [(7, 250), (64, 4096)]:
        for device in ["cuda", "cuda, own stream", "cpu"]:
            stream = torch.cuda.Stream() if device == "cuda, own stream" else None
            if stream is not None:
                torch.cuda.synchronize()  # the inputs below are made on the default stream
                lib.aicf_set_cuda_stream(ctypes.c_void_p(stream.cuda_stream))
            device_name = device.split(",")[0]
            x = torch.randn(rows, cols, device=device_name)
            w = torch.rand(cols, device=device_name) + 0.5
            out = torch.empty_like(x)
            keep = []
            code = lib.aot_rms_norm(dltensor_pointer(x, keep), dltensor_pointer(w, keep), 1e-5,
                                    dltensor_pointer(out, keep))
            if stream is not None:
                lib.aicf_set_cuda_stream(None)
            if device_name == "cuda":
                torch.cuda.synchronize()
            want = x * torch.rsqrt((x * x).mean(-1, keepdim=True) + 1e-5) * w
            err = (out - want).abs().max().item() if code == 0 else float("nan")
            good = code == 0 and err < 1e-4
            ok = ok and good
            note = "ok" if good else (lib.aicf_last_error().decode() if code else "WRONG")
            print(f"| rms_norm | {rows} x {cols} | {device} | {err:.2e} | {note} |")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
