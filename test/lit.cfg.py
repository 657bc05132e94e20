# -*- Python -*-
# lit configuration of dlc's FileCheck tests.

import os

import lit.formats
from lit.llvm import llvm_config

config.name = "DLC"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "unittest", "Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.dlc_obj_root, "test")

config.substitutions.append(("%models", os.path.join(config.dlc_src_root, "models")))
# Debian's python3 with python3-torch and python3-numpy: the reference that
# nobody here wrote. The python3 first on PATH may be another interpreter.
config.substitutions.append(("%python", "/usr/bin/python3"))
config.substitutions.append(("%peers", os.path.join(config.dlc_src_root, "bench", "peers")))
# Building against the installed dlc (test/Examples): this build, and the
# CMake, generator and compiler it was configured with.
config.substitutions.append(("%dlc_src", config.dlc_src_root))
config.substitutions.append(("%dlc_obj", config.dlc_obj_root))
config.substitutions.append(("%cmake_configure", " ".join(
    ['"%s"' % config.cmake_command, '-G "%s"' % config.cmake_generator,
     '-DCMAKE_CXX_COMPILER="%s"' % config.cxx_compiler] +
    (['-DCMAKE_CXX_COMPILER_LAUNCHER="%s"' % config.cxx_compiler_launcher]
     if config.cxx_compiler_launcher else []))))
config.substitutions.append(("%cmake", '"%s"' % config.cmake_command))
# What %python offers, as features for REQUIRES / UNSUPPORTED: `jax` where
# JAX is importable, `torch-compile` where PyTorch is 2.0 or later,
# `torchvision` where dlc-import can build torchvision's models.
import subprocess
config.available_features.update(subprocess.run(
    ["/usr/bin/python3", "-c",
     "import importlib.util as u, importlib.metadata as m\n"
     "print('jax' if u.find_spec('jax') else '')\n"
     "print('torchvision' if u.find_spec('torchvision') else '')\n"
     "try: print('torch-compile' if int(m.version('torch').split('.')[0]) >= 2 else '')\n"
     "except Exception: pass"],
    capture_output=True, text=True).stdout.split())

# PyTorch's CPU bf16 kernels round as dlc does only where the CPU computes
# bf16 natively (AVX512-BF16); elsewhere its bf16 backward differs by ~1%.
with open("/proc/cpuinfo") as cpuinfo:
    if "avx512_bf16" in cpuinfo.read().split():
        config.available_features.add("avx512-bf16")

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.dlc_tools_dir, append_path=True)
llvm_config.add_tool_substitutions(["dlc-opt", "dlc-bench", "dlc-run", "dlc-import"], [config.dlc_tools_dir])

# NVRTC (from the CUDA toolkit) compiles generated kernels without a GPU.
if getattr(config, "dlc_enable_cuda", "OFF").upper() in ("ON", "1", "TRUE", "YES"):
    config.available_features.add("nvrtc")

# MPI ranks: the plugin was built and the launcher is there. %mpirun N runs
# N processes on this machine, as root too (CI) and with more processes than
# cores.
mpiexec = getattr(config, "dlc_mpiexec", "")
if getattr(config, "dlc_enable_mpi", "OFF").upper() in ("ON", "1", "TRUE", "YES") and \
        mpiexec and os.path.exists(mpiexec):
    config.available_features.add("mpi")
    config.substitutions.append(
        ("%mpirun", "env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "
         "OMPI_MCA_btl=self,vader " + mpiexec + " --oversubscribe -np"))

# A sanitizer build (DLC_SANITIZE): its options reach the tools, and a test
# that cannot run under it says `UNSUPPORTED: sanitized` with the reason.
if getattr(config, "dlc_sanitize", ""):
    config.available_features.add("sanitized")
    for var in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS", "ASAN_SYMBOLIZER_PATH"):
        if var in os.environ:
            config.environment[var] = os.environ[var]
