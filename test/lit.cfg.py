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

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.dlc_tools_dir, append_path=True)
llvm_config.add_tool_substitutions(["dlc-opt", "dlc-bench"], [config.dlc_tools_dir])
