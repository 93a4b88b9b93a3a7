#!/usr/bin/env python3
"""What bench/trainer/gpu.sh needs to know of the PyTorch it measures, as one JSON line: whether torch sees a CUDA
device, the device's name, torch's version, CUDA and NCCL, and the CMake prefix to build hpclaunch-train against.
Run with the python under test (PYTHON); prints {"cuda": false, "error": ...} when torch cannot be imported."""
import json

try:
    import torch
except Exception as e:  # no torch at all: gpu.sh says so in one line
    print(json.dumps({"cuda": False, "error": f"no torch: {e}"}))
else:
    cuda = torch.cuda.is_available()
    nccl = ".".join(map(str, torch.cuda.nccl.version())) if cuda and torch.distributed.is_nccl_available() else None
    print(json.dumps({"cuda": cuda, "gpu": torch.cuda.get_device_name(0) if cuda else None,
                      "torch": torch.__version__, "cuda_version": torch.version.cuda, "nccl": nccl,
                      "prefix": torch.utils.cmake_prefix_path}))
