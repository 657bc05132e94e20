//===- HostKernels.cpp - one shared object of host kernels per plan -------===//
//
// The translation unit holds every distinct kernel in a namespace of its
// own (kernels written as separate NVRTC units repeat helpers such as the
// half conversions of the table kernels), after one copy of the prelude
// with both half types enabled, and an exported entry per kernel that
// unpacks an argument array into the kernel's typed parameters. The shared
// object is named by a 128-bit hash of the source, the compiler's version,
// the flags and the CPU (-march=native), and carries the key's check as a
// symbol, so a foreign or truncated file is a miss. It is written under a
// temporary name and renamed, so concurrent runs never load half a file.
//
//===----------------------------------------------------------------------===//

#include "dlc/runtime/DiskCache.h"
#include "dlc/runtime/cpu/HostKernels.h"

#include "dlc/runtime/codegen/KernelPrelude.h"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include <dlfcn.h>
#include <filesystem>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace dlc::rt::cpu {

namespace {

/// A word for sh: single-quoted.
std::string shellQuote(const std::string &s) {
  std::string q = "'";
  for (char c : s)
    q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

/// `command` run by /bin/sh: its exit status, or -1 when it could not run
/// or was killed. Unlike std::system, the caller keeps its SIGINT and
/// SIGTERM handlers while it waits: std::system ignores SIGINT, so a
/// dlc-bench sweep sent one while it compiled a configuration's kernels
/// lost it and ran on to the end (interrupt.test, under load).
int runShell(const std::string &command) {
  const char *argv[] = {"sh", "-c", command.c_str(), nullptr};
  pid_t pid;
  if (posix_spawn(&pid, "/bin/sh", nullptr, nullptr, const_cast<char **>(argv), environ) != 0)
    return -1;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR)
      return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/// What `command` prints (stdout), or "" when it cannot run.
std::string commandOutput(const std::string &command) {
  std::string out;
  if (FILE *pipe = popen(command.c_str(), "r")) {
    char buffer[256];
    while (size_t n = std::fread(buffer, 1, sizeof buffer, pipe))
      out.append(buffer, n);
    pclose(pipe);
  }
  return out;
}

/// The compiler's --version text, once per compiler per process.
std::string compilerIdentity(const std::string &compiler) {
  static std::mutex mutex;
  static std::map<std::string, std::string> known;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = known.find(compiler);
  if (it == known.end())
    it = known.emplace(compiler, commandOutput(compiler + " --version 2>/dev/null")).first;
  return it->second;
}

/// What -march=native compiles for: the first CPU's model and flags.
std::string cpuIdentity() {
  std::ifstream info("/proc/cpuinfo");
  std::string line, model, flags;
  while (std::getline(info, line) && (model.empty() || flags.empty())) {
    if (model.empty() && line.rfind("model name", 0) == 0)
      model = line;
    if (flags.empty() && line.rfind("flags", 0) == 0)
      flags = line;
  }
  return model + "\n" + flags;
}

/// cuda_fp16.h and cuda_bf16.h for the host: the types as their bits,
/// converted exactly as the CPU converts them (the embedded HalfToFloat /
/// FloatToHalf texts, in a namespace of their own).
std::string hostHalfHeader() {
  return std::string("#pragma once\n#include <string.h>\n#define DLC_DEVICE inline\n"
                     "namespace dlc_host_half {\n") +
         codegen::halfToFloatText() + codegen::floatToHalfText() +
         "} // namespace dlc_host_half\n#undef DLC_DEVICE\n"
         "struct __half { unsigned short x; };\n"
         "struct __nv_bfloat16 { unsigned short x; };\n"
         "inline float __half2float(__half v) { return dlc_host_half::dlc_f16_bits_to_float(v.x); }\n"
         "inline __half __float2half_rn(float f) {\n"
         "  __half h; h.x = dlc_host_half::dlc_float_to_f16_bits(f); return h;\n}\n"
         "inline float __bfloat162float(__nv_bfloat16 v) {\n"
         "  return dlc_host_half::dlc_bf16_bits_to_float(v.x);\n}\n"
         "inline __nv_bfloat16 __float2bfloat16_rn(float f) {\n"
         "  __nv_bfloat16 h; h.x = dlc_host_half::dlc_float_to_bf16_bits(f); return h;\n}\n";
}

/// Unpacks an argument array into a kernel's parameters: pointers, and the
/// integers (segments, part, parts) passed as pointer-sized values.
const char *const kInvoke = R"cpp(#define DLC_HOST_EXPORT extern "C" __attribute__((visibility("default")))
template <typename T> inline T dlc_host_arg(void *p) { return (T)p; }
template <> inline int dlc_host_arg<int>(void *p) { return (int)(intptr_t)p; }
template <typename... P, size_t... I>
inline void dlc_host_call(void (*f)(P...), void *const *a, std::index_sequence<I...>) {
  f(dlc_host_arg<P>(a[I])...);
}
template <typename... P> inline void dlc_host_invoke(void (*f)(P...), void *const *a) {
  dlc_host_call(f, a, std::index_sequence_for<P...>());
}
)cpp";

std::string translationUnit(const std::vector<const codegen::GeneratedKernel *> &kernels) {
  std::string tu = "// dlc host kernels (cpu/HostKernels.cpp): " +
                   std::to_string(kernels.size()) + " kernels\n"
                   "#include <stddef.h>\n#include <stdint.h>\n#include <string.h>\n"
                   "#include <utility>\n#define DLC_F16 1\n#define DLC_BF16 1\n"
                   "#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n";
  tu += codegen::kernelPrelude();
  tu += codegen::hostPartsText();
  tu += kInvoke;
  for (size_t i = 0; i < kernels.size(); ++i) {
    std::string ns = "dlc_k" + std::to_string(i);
    tu += "\nnamespace " + ns + " {\n" + kernels[i]->source + "} // namespace " + ns + "\n";
    tu += "DLC_HOST_EXPORT void dlc_host_" + kernels[i]->name +
          "(void *const *a) { dlc_host_invoke(" + ns + "::" + kernels[i]->name + ", a); }\n";
  }
  return tu;
}

Status compileError(const std::string &message) {
  return Status(StatusCode::kInternal, "host kernels: " + message);
}

} // namespace

std::string hostCompiler() {
  const char *cxx = std::getenv("DLC_HOST_CXX");
  return cxx && *cxx ? cxx : "c++";
}

const std::vector<std::string> &hostCompileFlags() {
  // No -ffast-math: results stay the reference's within rounding. No FMA
  // contraction either: the reference kernels are built without it.
  // -fno-trapping-math changes no value (no kernel reads the floating-point
  // exception flags); without it GCC may not compute a dropout's kept value
  // before knowing it is kept (`keep ? v * s : 0`), and the loop stays scalar.
  static const std::vector<std::string> flags = {
      "-std=c++17", "-O3", "-march=native", "-shared", "-fPIC", "-fno-math-errno",
      "-fno-trapping-math", "-ffp-contract=off", "-fno-strict-aliasing", "-fvisibility=hidden",
      "-w"};
  return flags;
}

std::string defaultHostKernelCacheDir() {
  if (const char *dir = std::getenv("DLC_KERNEL_CACHE"))
    return dir;
  if (const char *home = std::getenv("HOME"); home && *home)
    return std::string(home) + "/.cache/dlc/host-kernels";
  return "";
}

StatusOr<std::shared_ptr<HostKernelLibrary>>
HostKernelLibrary::build(const std::vector<const codegen::GeneratedKernel *> &all,
                         const std::string &cacheDir) {
  std::vector<const codegen::GeneratedKernel *> kernels;
  std::map<std::string, const codegen::GeneratedKernel *> byName;
  for (const codegen::GeneratedKernel *g : all) {
    if (g->target != codegen::KernelTarget::kHost)
      return compileError("kernel '" + g->name + "' was generated for CUDA, not the host");
    if (byName.emplace(g->name, g).second)
      kernels.push_back(g);
  }
  const std::string compiler = hostCompiler();
  std::string flags;
  for (const std::string &f : hostCompileFlags())
    flags += " " + f;
  const std::string tu = translationUnit(kernels), header = hostHalfHeader();
  const std::string key = compilerIdentity(compiler) + "\n" + compiler + flags + "\n" +
                          cpuIdentity() + "\n" + header + tu;
  const std::string name = hex64(fnv1a(key, 1469598103934665603ull)) +
                           hex64(fnv1a(key, 0x84222325cbf29ce4ull));
  const std::string check = hex64(fnv1a(key, 0x6c62272e07bb0142ull)) + hex64(key.size());

  std::shared_ptr<HostKernelLibrary> lib(new HostKernelLibrary());
  bool cached = !cacheDir.empty();
  if (cached && !makeDirs(cacheDir))
    return compileError("cannot create the cache directory " + cacheDir);
  lib->path_ = cached ? cacheDir + "/" + name + ".so" : "";
  // A file whose key check matches is a hit; anything else is compiled anew.
  auto load = [&](const std::string &path) {
    void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle)
      return false;
    auto *stored = static_cast<const char *>(dlsym(handle, "dlc_host_kernels_key"));
    if (!stored || check != stored) {
      dlclose(handle);
      return false;
    }
    lib->handle_ = handle;
    return true;
  };
  lib->cacheHit_ = cached && access(lib->path_.c_str(), R_OK) == 0 && load(lib->path_);
  if (!lib->cacheHit_) {
    char scratch[] = "/tmp/dlc-host-kernels-XXXXXX";
    std::string dir = cached ? cacheDir + "/build-" + std::to_string(getpid()) + "-" + name
                             : std::string(mkdtemp(scratch) ? scratch : "");
    if (dir.empty() || !makeDirs(dir))
      return compileError("cannot create a build directory for " + name);
    std::ofstream(dir + "/cuda_fp16.h") << header;
    std::ofstream(dir + "/cuda_bf16.h") << "#pragma once\n#include \"cuda_fp16.h\"\n";
    std::ofstream(dir + "/kernels.cpp")
        << tu << "DLC_HOST_EXPORT const char dlc_host_kernels_key[] = \"" << check << "\";\n";
    std::string command = compiler + flags + " -I" + shellQuote(dir) + " -o " +
                          shellQuote(dir + "/kernels.so") + " " +
                          shellQuote(dir + "/kernels.cpp") + " > " +
                          shellQuote(dir + "/log.txt") + " 2>&1";
    auto start = std::chrono::steady_clock::now();
    int rc = runShell(command);
    lib->compileSeconds_ =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (rc != 0) {
      std::istringstream log(readFile(dir + "/log.txt"));
      std::string first, line;
      for (int i = 0; i < 20 && std::getline(log, line); ++i)
        first += "\n  " + line;
      return compileError("`" + compiler + "` failed (exit status " + std::to_string(rc) +
                          ") on " + std::to_string(kernels.size()) + " kernels in " + dir +
                          "/kernels.cpp (kept, with log.txt); the log begins:" + first);
    }
    std::string built = dir + "/kernels.so";
    if (cached) {
      // The source stays beside its library, for reading and profiling.
      std::rename((dir + "/kernels.cpp").c_str(), (cacheDir + "/" + name + ".cpp").c_str());
      if (std::rename(built.c_str(), lib->path_.c_str()) != 0)
        return compileError("cannot move " + built + " to " + lib->path_);
      built = lib->path_;
    }
    if (!load(built)) {
      const char *why = dlerror();
      return compileError("cannot load " + built + ": " + (why ? why : "its key does not match"));
    }
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
    if (!cached)
      lib->path_ = "(not cached)";
  }
  for (const codegen::GeneratedKernel *g : kernels) {
    auto entry = reinterpret_cast<Entry>(dlsym(lib->handle_, ("dlc_host_" + g->name).c_str()));
    if (!entry)
      return compileError(lib->path_ + " has no entry for kernel '" + g->name + "'");
    lib->entries_.emplace(g->name, entry);
  }
  return lib;
}

HostKernelLibrary::~HostKernelLibrary() {
  if (handle_)
    dlclose(handle_);
}

HostKernelLibrary::Entry HostKernelLibrary::entry(const std::string &kernelName) const {
  auto it = entries_.find(kernelName);
  return it == entries_.end() ? nullptr : it->second;
}

} // namespace dlc::rt::cpu
