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
# DLC_BIN: where the carried binaries are (default build/bin).
# DLC_GTEST_SRC: a GoogleTest source tree to build when the machine has no
#   installed GTest (e.g. a copy of Debian's /usr/src/googletest).
# DLC_PART: tests (unit tests + dlc-bandwidth), checks (CPU vs GPU plans),
#   bench (the timed plans), or all (default); space-separated for several.
# OUT receives every figure: the unit tests' log, dlc-bandwidth's table, each
# plan's JSON with and without the CUDA graph, its --profile and the CPU's
# loss beside the GPU's.
# DLC_CUDA_SYNC=1 waits after every launch, so a device fault names its
# launch; DLC_CUDA_TF32=1 lets fp32 GEMMs and convolutions use TF32.
# DLC_DEADLINE: a time (seconds since the epoch) after which no new plan
#   starts; those left are listed as skipped and the exit status is 3
#   (bench/gpu/run_all.sh sets it to fit a lent machine's call).
# DLC_GPU: the GPU the benchmark plans' MFU is against (default H100-SXM).
# DLC_DUMPS: where the checks' step dumps go (default OUT; hundreds of MB for
#   the large models, so bench/gpu/run_all.sh keeps them out of OUT).
set -uo pipefail
cd "$(dirname "$0")/../.."
PLANS=${1:-plans}
OUT=${2:-bench/results/gpu}
DUMPS=${DLC_DUMPS:-$OUT}
mkdir -p "$OUT" "$DUMPS"
status=0
# Attention key biases: mathematically zero gradients (compare_dumps.py).
ZERO_GRADIENT=(--zero-gradient 'attention\.self\.key\.bias|attn\.k\.bias')
BIN=${DLC_BIN:-build/bin}
PART=${DLC_PART:-all}
part() { [ "$PART" = all ] || [[ " $PART " == *" $1 "* ]]; }
skipped=()
late() { # NAME: true (and NAME noted as skipped) once the deadline has passed
  [ -n "${DLC_DEADLINE:-}" ] && [ "$(date +%s)" -ge "$DLC_DEADLINE" ] || return 1
  skipped+=("$1"); return 0
}

# Vendor libraries the toolkit lacks, from Python's nvidia packages (their
# layout differs between CUDA 12 and 13 wheels, so search for the file).
SITE=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])' 2>/dev/null || true)
libdir() {
  ldconfig -p 2>/dev/null | grep -q "$1 " && return 1
  for d in /usr/local/cuda/lib64 /usr/local/cuda/lib; do [ -e "$d/$1" ] && return 1; done
  [ -n "$SITE" ] && find "$SITE/nvidia" -name "$1" -printf '%h\n' 2>/dev/null | head -1
}
CUDNN_LIB=
for lib in libcudnn.so.9 libcublasLt.so.13 libnvrtc.so.13 libnccl.so.2; do
  if dir=$(libdir $lib) && [ -n "$dir" ]; then
    export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    [ $lib = libcudnn.so.9 ] && CUDNN_LIB=$dir
  fi
done
export LD_LIBRARY_PATH="/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true

TESTS=$BIN/DLCRuntimeTests
if ! "$TESTS" --gtest_list_tests >/dev/null 2>&1; then
  # Rebuild the runtime and its tests without MLIR (they never include it).
  B=build-gpu; mkdir -p $B/src
  CUDNN_ROOT=${CUDNN_LIB:+$(dirname "$CUDNN_LIB")}
  cat > $B/src/CMakeLists.txt <<CMAKE
cmake_minimum_required(VERSION 3.20)
project(dlc_runtime_only LANGUAGES C CXX CUDA)
set(CMAKE_CXX_STANDARD 17)
set(CMAKE_RUNTIME_OUTPUT_DIRECTORY \${CMAKE_BINARY_DIR}/bin)
find_package(CUDAToolkit REQUIRED)
find_package(GTest QUIET)
if(NOT GTest_FOUND)
  set(INSTALL_GTEST OFF CACHE BOOL "" FORCE)
  add_subdirectory("$(realpath -m "${DLC_GTEST_SRC:-/usr/src/googletest}")" googletest)
  add_library(GTest::gtest ALIAS gtest)
  add_library(GTest::gtest_main ALIAS gtest_main)
endif()
set(DLC_ENABLE_CUDA ON)
set(DLC_CUDNN_ROOT "$CUDNN_ROOT")
add_subdirectory($PWD/runtime runtime)
add_subdirectory($PWD/bench/run bench-run)
file(GLOB tests $PWD/test/unittest/Runtime/*Test.cpp)
add_executable(DLCRuntimeTests \${tests})
target_link_libraries(DLCRuntimeTests PRIVATE dlc_runtime GTest::gtest GTest::gtest_main \${CMAKE_DL_LIBS})
# The same definitions test/unittest/CMakeLists.txt gives them.
target_compile_definitions(DLCRuntimeTests PRIVATE DLC_HOST_CXX="\${CMAKE_CXX_COMPILER}"
  DLC_SOURCE_DIR="$PWD" DLC_RUNTIME_TEST_DIR="$PWD/test/unittest/Runtime")
target_link_libraries(DLCRuntimeTests PRIVATE CUDA::cudart_static)
CMAKE
  cmake -S $B/src -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc &&
    cmake --build $B --target DLCRuntimeTests dlc-kernels dlc-bandwidth dlc-run || exit 1
  TESTS=$B/bin/DLCRuntimeTests
fi
readelf -d "$TESTS" | grep -q 'libcuda\.so' && { echo "error: $TESTS links the driver library" >&2; status=1; }
if part tests; then
"$TESTS" --gtest_filter='CudaExecutor*:CudaDevice*:Codegen*:KernelCompiler*:HandKernels*:LaunchPaths*:*Nvml*:Nccl*' \
  2>&1 | tee "$OUT/gtest.log"
[ "${PIPESTATUS[0]}" = 0 ] || status=1
# NCCL's one-rank group again with blocking communicators, the way before
# 2.14: tells a problem of the non-blocking ones (which Nccl* above use)
# from any other.
DLC_NCCL_BLOCKING=1 "$TESTS" --gtest_filter='Nccl.OneRank*:CudaExecutor.ARankWithACommunicator*' \
  2>&1 | tee -a "$OUT/gtest.log"
[ "${PIPESTATUS[0]}" = 0 ] || status=1

# The generated element-wise kernels against a device copy, same run.
BW=$(dirname "$TESTS")/dlc-bandwidth
[ -x "$BW" ] || BW=$BIN/dlc-bandwidth
"$BW" --mib 1024 --steps 20 | tee "$OUT/bandwidth.txt"
[ "${PIPESTATUS[0]}" = 0 ] || status=1
fi

KERNELS=$(dirname "$TESTS")/dlc-kernels
[ -x "$KERNELS" ] || KERNELS=$BIN/dlc-kernels
BENCH=$(dirname "$TESTS")/dlc-run
"$BENCH" --help >/dev/null 2>&1 || BENCH=$BIN/dlc-run
if "$BENCH" --help >/dev/null 2>&1; then
  # check-*.plan (every model at a small batch, bench/gpu/make_plans.sh):
  # one whole step on the reference backend (the numerical truth) and the
  # GPU, the loss, every gradient and every updated parameter compared (fp32
  # without TF32: within 1e-3 relative); then the loss after three steps on
  # the reference, the GPU replaying its graph and the GPU launching kernel
  # by kernel. The reference is far too slow for the benchmark plans, which
  # are only timed, and for three steps of the largest models (there the
  # GPU's two ways are compared with each other).
  # In make_plans.sh's order (cheapest first) where it wrote one.
  checks=("$PLANS"/check-*.plan)
  [ -e "$PLANS/checks.txt" ] && mapfile -t checks < <(sed "s|^|$PLANS/|" "$PLANS/checks.txt")
  for plan in "${checks[@]}"; do
    [ -e "$plan" ] && part checks || continue
    name=$(basename "${plan%.plan}")
    late "$name" && continue
    echo "== $plan"
    rm -rf "$DUMPS/$name".{cpu,cuda,cuda.again}.dump
    for backend in reference cuda cuda; do
      dump=$DUMPS/$name.$backend.dump; [ $backend = reference ] && dump=$DUMPS/$name.cpu.dump
      [ -e "$dump" ] && dump=$DUMPS/$name.$backend.again.dump
      "$BENCH" "$plan" --backend $backend --warmup 0 --steps 1 --repeats 1 \
        --dump-out "$dump" > /dev/null || status=1
    done
    # Updated parameters within 1e-2: see compare_dumps.py on Adam's step.
    # ResNet-50's float32 step is ill-conditioned (PyTorch's own float32
    # step is 1.7e-1 from float64): its CPU-vs-GPU figures are printed, and
    # the float64 check below decides.
    ill_conditioned=; [[ "$name" == *-resnet50 ]] && ill_conditioned=1
    # Half-precision plans: activations round differently on the two sides
    # (cuDNN's algorithms, fused batch norm), so the bound is half
    # precision's, 1e-2 per kernel, summed over a step; bf16 keeps 3 fewer
    # bits than fp16, so twice that.
    tol=1e-3 param_tol=1e-2
    case "$name" in check-amp-*) tol=3e-2 param_tol=3e-2 ;; check-bf16-*) tol=6e-2 param_tol=6e-2 ;; esac
    python3 test/Bench/compare_dumps.py "$DUMPS/$name.cuda.dump" "$DUMPS/$name.cpu.dump" \
      --tolerance $tol --param-tolerance $param_tol "${ZERO_GRADIENT[@]}" 2>&1 | head -8 ||
      [ -n "$ill_conditioned" ] || status=1
    # The hand-written batch norm (DLC_CUDA_BATCH_NORM=hand-written) where
    # the plan has cuDNN batch norms: within the same bounds of the CPU.
    if "$KERNELS" --paths --verbose "$plan" 2>/dev/null | grep "cudnn batch_norm" > /dev/null; then
      rm -rf "$DUMPS/$name.cuda-hand-bn.dump"
      DLC_CUDA_BATCH_NORM=hand-written "$BENCH" "$plan" --backend cuda --warmup 0 --steps 1 \
        --repeats 1 --dump-out "$DUMPS/$name.cuda-hand-bn.dump" > /dev/null || status=1
      echo -n "  hand-written batch norm: "
      python3 test/Bench/compare_dumps.py "$DUMPS/$name.cuda-hand-bn.dump" "$DUMPS/$name.cpu.dump" \
        --tolerance $tol --param-tolerance $param_tol "${ZERO_GRADIENT[@]}" | head -4 ||
        [ -n "$ill_conditioned" ] || status=1
    fi
    # The same step twice on the GPU: cuDNN's fastest algorithms may sum in
    # any order, so this is how far the GPU disagrees with itself.
    echo -n "  GPU run against GPU run: "
    python3 test/Bench/compare_dumps.py "$DUMPS/$name.cuda.again.dump" "$DUMPS/$name.cuda.dump" \
      --tolerance 1e-3 "${ZERO_GRADIENT[@]}" | head -1
    case "$name" in *-vgg16|*-hrnet_w18|*-gpt2|*-deeplabv3p) reference=no ;; *) reference=yes ;; esac
    [ $reference = no ] || "$BENCH" "$plan" --backend reference --warmup 0 --steps 3 --repeats 1 \
      --format json -o "$OUT/$name.cpu.json" || { status=1; continue; }
    for graph in "" --no-cuda-graph; do
      "$BENCH" "$plan" --backend cuda --warmup 0 --steps 3 --repeats 1 $graph --format json \
        -o "$OUT/$name.check${graph:+.nograph}.json" || status=1
    done
    cpu_json=$OUT/$name.cpu.json; [ $reference = no ] && cpu_json=$OUT/$name.check.nograph.json
    python3 - "$cpu_json" "$OUT/$name.check.json" "$OUT/$name.check.nograph.json" $reference <<'PY' || [ -n "$ill_conditioned" ] || status=1
import json, sys
cpu, *gpus = (json.load(open(p)) for p in sys.argv[1:4])
if sys.argv[4] == "no":  # the GPU's graph against its kernel-by-kernel launches
    print("  (three reference steps take minutes here: the graph against launching)")
    gpus = gpus[:1]
bad = False
for gpu, how in zip(gpus, ("graph", "no graph")):
    for key in ("first", "last"):
        a, b = cpu["loss"][key], gpu["loss"][key]
        rel = abs(a - b) / max(abs(a), 1e-30)
        ok = rel <= 1e-3 or gpu["precision"] != "fp32"
        bad |= not ok
        print(f"  {how:8s} loss {key}: {'cpu' if sys.argv[4] == 'yes' else 'no graph'} {a:.6g} gpu {b:.6g} relative {rel:.2e}{'' if ok else '  FAIL'}")
print("  launches by path:", gpus[0].get("launches_by_path"), "graph:", gpus[0].get("cuda_graph"),
      gpus[0].get("cuda_graph_note"))
sys.exit(1 if bad else 0)
PY
  done
  # ResNet-50 at batch 2 against float64 (torchvision's model on this
  # machine's PyTorch): one step from torchvision's initialization, CPU and
  # GPU, each against float64 and against each other.
  if part checks && [ -e "$PLANS/check-resnet50.plan" ] && ! late float64-resnet50 &&
     python3 -c 'import torchvision' 2>/dev/null; then
    echo "== ResNet-50 batch 2 against float64"
    REF=$DUMPS/resnet50-torchvision; rm -rf "$REF" "$DUMPS"/resnet50-f64.*.dump
    python3 bench/gpu/torch_reference.py init "$REF" --batch 2 || status=1
    for backend in reference cuda; do
      "$BENCH" "$PLANS/check-resnet50.plan" --backend $backend --warmup 0 --steps 1 --repeats 1 \
        --params-in "$REF" --inputs-in "$REF" --dump-out "$DUMPS/resnet50-f64.$backend.dump" > /dev/null || status=1
    done
    python3 bench/gpu/torch_reference.py check "$REF" "$DUMPS"/resnet50-f64.{reference,cuda}.dump || status=1
  fi
  # The benchmark plans: samples/s with the graph and without, then a
  # per-launch profile. About 10 steps each keeps the whole set within a
  # few minutes of an H100.
  # In make_plans.sh's order (the headline workloads first) where it wrote one.
  sweep=("$PLANS"/*.plan)
  [ -e "$PLANS/sweep.txt" ] && mapfile -t sweep < <(sed "s|^|$PLANS/|" "$PLANS/sweep.txt")
  for plan in "${sweep[@]}"; do
    [ -e "$plan" ] && part bench || continue
    name=$(basename "${plan%.plan}")
    case "$name" in check-*) continue ;; esac
    late "$name" && continue
    echo "== $plan"
    "$BENCH" "$plan" --backend cuda --warmup 2 --steps 10 --repeats 3 --format json \
      --gpu "${DLC_GPU:-H100-SXM}" -o "$OUT/$name.json" || status=1
    "$BENCH" "$plan" --backend cuda --warmup 2 --steps 5 --repeats 1 --no-cuda-graph --format json \
      -o "$OUT/$name.nograph.json" || status=1
    # Per launch in the JSON (what `dlc-bench calibrate` wants), by kind on
    # stderr.
    "$BENCH" "$plan" --backend cuda --warmup 1 --steps 2 --repeats 1 --profile --format json \
      -o "$OUT/$name.profile.json" > /dev/null 2> "$OUT/$name.profile.txt" || status=1
    head -25 "$OUT/$name.profile.txt"
    # Batch norm on cuDNN against the hand-written kernel, same call (only
    # ratios within one run compare): a plan with cuDNN batch norms is
    # timed again with DLC_CUDA_BATCH_NORM=hand-written, and profiled.
    if "$KERNELS" --paths --verbose "$plan" 2>/dev/null | grep "cudnn batch_norm" > /dev/null; then
      DLC_CUDA_BATCH_NORM=hand-written "$BENCH" "$plan" --backend cuda --warmup 2 --steps 10 \
        --repeats 3 --format json -o "$OUT/$name.hand-bn.json" || status=1
      DLC_CUDA_BATCH_NORM=hand-written "$BENCH" "$plan" --backend cuda --warmup 1 --steps 2 \
        --repeats 1 --profile > /dev/null 2> "$OUT/$name.hand-bn.profile.txt" || status=1
      grep "batch_norm" "$OUT/$name.hand-bn.profile.txt" | head -4
    fi
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
if [ ${#skipped[@]} -gt 0 ]; then
  echo "skipped for want of time (DLC_DEADLINE): ${skipped[*]}" | tee -a "$OUT/skipped.txt" >&2
  [ $status = 0 ] && status=3
fi
exit $status
