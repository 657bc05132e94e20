# -*- Python -*-
# lit configuration of dlc's FileCheck tests.

import os

import lit.formats
from lit.llvm import llvm_config

config.name = "DLC"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "unittest"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.dlc_obj_root, "test")

config.substitutions.append(("%models", os.path.join(config.dlc_src_root, "models")))

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.dlc_tools_dir, append_path=True)
llvm_config.add_tool_substitutions(["dlc-opt"], [config.dlc_tools_dir])
