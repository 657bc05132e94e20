#!/usr/bin/env bash
# The CUDA backend's checks, on a machine with a GPU.
#
# Needs: an NVIDIA GPU and driver; CUDA 13 (NVRTC, cuBLASLt) under
# /usr/local/cuda; cuDNN 9 there or in the Python environment's
# nvidia-cudnn-cu* package (its lib/ is put on LD_LIBRARY_PATH below, as are
# nvidia.cublas's and nvidia.cuda_nvrtc's when the toolkit lacks them).
# The GPU machine has no MLIR, so binaries and plans come from a dev machine:
#   build/bin/DLCRuntimeTests   self-contained (GoogleTest linked in); else it
#                               is rebuilt here from runtime/ (cmake, ninja,
#                               GoogleTest needed; no MLIR)
#   build/bin/dlc-run           runs plans; links no MLIR (rebuilt here with the
#                               runtime when the carried one does not start)
#   plans/*.plan                dev$ build/bin/dlc-bench models/mlp.mlir --batch 64 \
#                                      --compile-only --emit-plan plans/mlp.plan
# Usage: bench/gpu/run_gpu_tests.sh [PLAN_DIR] [OUT]    (default: plans, bench/results/gpu)
# OUT receives every figure: the unit tests' log, dlc-bandwidth's table, each
# plan's JSON with and without the CUDA graph, its --profile and the CPU's
# loss beside the GPU's.
# DLC_CUDA_SYNC=1 waits after every launch, so a device fault names its
# launch; DLC_CUDA_TF32=1 lets fp32 GEMMs and convolutions use TF32.
set -uo pipefail
cd "$(dirname "$0")/../.."
PLANS=${1:-plans}
OUT=${2:-bench/results/gpu}
mkdir -p "$OUT"
status=0

# Vendor libraries the toolkit lacks, from Python's nvidia packages.
pylib() { python3 -c "import nvidia.$1, os; print(os.path.join(os.path.dirname(nvidia.$1.__file__), 'lib'))" 2>/dev/null; }
for want in "libcudnn.so.9 cudnn" "libcublasLt.so.13 cublas" "libnvrtc.so.13 cuda_nvrtc"; do
  set -- $want
  if ! ls /usr/local/cuda/lib64/$1 >/dev/null 2>&1 && dir=$(pylib $2) && [ -d "$dir" ]; then
    export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  fi
done
export LD_LIBRARY_PATH="/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true

TESTS=build/bin/DLCRuntimeTests
if ! "$TESTS" --gtest_list_tests >/dev/null 2>&1; then
  # Rebuild the runtime and its tests without MLIR (they never include it).
  B=build-gpu; mkdir -p $B/src
  CUDNN_ROOT=$(dirname "$(pylib cudnn)" 2>/dev/null || true)
  cat > $B/src/CMakeLists.txt <<CMAKE
cmake_minimum_required(VERSION 3.20)
project(dlc_runtime_only LANGUAGES C CXX CUDA)
set(CMAKE_CXX_STANDARD 17)
set(CMAKE_RUNTIME_OUTPUT_DIRECTORY \${CMAKE_BINARY_DIR}/bin)
find_package(CUDAToolkit REQUIRED)
find_package(GTest REQUIRED)
set(DLC_ENABLE_CUDA ON)
set(DLC_CUDNN_ROOT "$CUDNN_ROOT")
add_subdirectory($PWD/runtime runtime)
add_subdirectory($PWD/bench/run bench-run)
file(GLOB tests $PWD/test/unittest/Runtime/*Test.cpp)
add_executable(DLCRuntimeTests \${tests})
target_link_libraries(DLCRuntimeTests PRIVATE dlc_runtime GTest::gtest GTest::gtest_main \${CMAKE_DL_LIBS})
target_compile_definitions(DLCRuntimeTests PRIVATE DLC_HOST_CXX="\${CMAKE_CXX_COMPILER}")
CMAKE
  cmake -S $B/src -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc &&
    cmake --build $B --target DLCRuntimeTests dlc-kernels dlc-bandwidth dlc-run || exit 1
  TESTS=$B/bin/DLCRuntimeTests
fi
readelf -d "$TESTS" | grep -q 'libcuda\.so' && { echo "error: $TESTS links the driver library" >&2; status=1; }
"$TESTS" --gtest_filter='CudaExecutor*:CudaDevice*:Codegen*:KernelCompiler*:HandKernels*:LaunchPaths*:*Nvml*' \
  2>&1 | tee "$OUT/gtest.log"
[ "${PIPESTATUS[0]}" = 0 ] || status=1

# The generated element-wise kernels against a device copy, same run.
BW=$(dirname "$TESTS")/dlc-bandwidth
[ -x "$BW" ] || BW=build/bin/dlc-bandwidth
"$BW" --mib 1024 --steps 20 | tee "$OUT/bandwidth.txt"
[ "${PIPESTATUS[0]}" = 0 ] || status=1

BENCH=$(dirname "$TESTS")/dlc-run
"$BENCH" --help >/dev/null 2>&1 || BENCH=build/bin/dlc-run
if "$BENCH" --help >/dev/null 2>&1; then
  # check-*.plan (small models, ResNet-50 and BERT-base at batch 2): one
  # whole step on the CPU and the GPU, the loss, every gradient and every
  # updated parameter compared (fp32 without TF32: within 1e-3 relative);
  # then the loss after three steps on the CPU, the GPU replaying its graph
  # and the GPU launching kernel by kernel. The CPU is far too slow for the
  # benchmark plans, which are only timed.
  for plan in "$PLANS"/check-*.plan; do
    [ -e "$plan" ] || continue
    name=$(basename "${plan%.plan}")
    echo "== $plan"
    for backend in cpu cuda; do
      rm -rf "$OUT/$name.$backend.dump"
      "$BENCH" "$plan" --backend $backend --warmup 0 --steps 1 --repeats 1 \
        --dump-out "$OUT/$name.$backend.dump" > /dev/null || status=1
    done
    python3 test/Bench/compare_dumps.py "$OUT/$name.cuda.dump" "$OUT/$name.cpu.dump" \
      --tolerance 1e-3 || status=1
    "$BENCH" "$plan" --backend cpu --warmup 0 --steps 3 --repeats 1 --format json \
      -o "$OUT/$name.cpu.json" || { status=1; continue; }
    for graph in "" --no-cuda-graph; do
      "$BENCH" "$plan" --backend cuda --warmup 0 --steps 3 --repeats 1 $graph --format json \
        -o "$OUT/$name.check${graph:+.nograph}.json" || status=1
    done
    python3 - "$OUT/$name.cpu.json" "$OUT/$name.check.json" "$OUT/$name.check.nograph.json" <<'PY' || status=1
import json, sys
cpu, *gpus = (json.load(open(p)) for p in sys.argv[1:4])
bad = False
for gpu, how in zip(gpus, ("graph", "no graph")):
    for key in ("first", "last"):
        a, b = cpu["loss"][key], gpu["loss"][key]
        rel = abs(a - b) / max(abs(a), 1e-30)
        ok = rel <= 1e-3 or gpu["precision"] != "fp32"
        bad |= not ok
        print(f"  {how:8s} loss {key}: cpu {a:.6g} gpu {b:.6g} relative {rel:.2e}{'' if ok else '  FAIL'}")
print("  launches by path:", gpus[0].get("launches_by_path"), "graph:", gpus[0].get("cuda_graph"),
      gpus[0].get("cuda_graph_note"))
sys.exit(1 if bad else 0)
PY
  done
  # The benchmark plans: samples/s with the graph and without, then a
  # per-launch profile. About 25 steps each keeps the whole set within a
  # few minutes of an H100.
  for plan in "$PLANS"/*.plan; do
    [ -e "$plan" ] || continue
    name=$(basename "${plan%.plan}")
    case "$name" in check-*) continue ;; esac
    echo "== $plan"
    for graph in "" --no-cuda-graph; do
      "$BENCH" "$plan" --backend cuda --warmup 5 --steps 20 --repeats 3 $graph --format json \
        -o "$OUT/$name${graph:+.nograph}.json" || status=1
    done
    "$BENCH" "$plan" --backend cuda --warmup 2 --steps 5 --repeats 1 --profile \
      > /dev/null 2> "$OUT/$name.profile.txt" || status=1
    head -25 "$OUT/$name.profile.txt"
  done
  python3 - "$OUT" <<'PY' | tee "$OUT/summary.txt"
import glob, json, os, sys
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    if path.endswith((".cpu.json", ".check.json", ".nograph.json")): continue
    r, n = json.load(open(path)), path[:-5] + ".nograph.json"
    g = json.load(open(n)) if os.path.exists(n) else None
    print(f"{os.path.basename(path)[:-5]:40s} {r['samples_per_sec']['median']:10.1f} samples/s"
          + (f"  graph off {g['samples_per_sec']['median']:10.1f} ({r['samples_per_sec']['median'] / g['samples_per_sec']['median']:.2f}x)" if g else "")
          + f"  util {r.get('gpu_utilization_percent')}%")
PY
else
  echo "skipped the plans: no dlc-run starts here" >&2; status=1
fi
exit $status
