//===- Npy.h - NumPy .npy files for exchanging tensors ----------*- C++ -*-===//
//
// Users check dlc against their own framework by exchanging parameters,
// inputs, gradients and updated parameters as .npy files (format 1.0/2.0,
// little-endian, C order), one per tensor.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_RUNTIME_NPY_H
#define DLC_RUNTIME_NPY_H

#include "dlc/runtime/Plan.h"

#include <string>
#include <string_view>
#include <vector>

namespace dlc::rt {

struct NpyArray {
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  std::string data; // raw little-endian elements
};

/// Reads f4, i4 or i8 arrays (f8 is converted to f4). Anything else, a
/// Fortran-order array or a truncated file is refused, naming the file.
StatusOr<NpyArray> readNpy(const std::string &path);
/// readNpy on bytes in memory; `source` names them in error messages.
StatusOr<NpyArray> parseNpy(std::string_view bytes, const std::string &source);

Status writeNpy(const std::string &path, DType dtype,
                const std::vector<int64_t> &shape, const void *data);

} // namespace dlc::rt

#endif // DLC_RUNTIME_NPY_H
