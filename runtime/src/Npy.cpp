//===- Npy.cpp - NumPy .npy files for exchanging tensors ------------------===//

#include "dlc/runtime/Npy.h"

#include <cstring>
#include <fstream>
#include <sstream>

namespace dlc::rt {

namespace {

/// The value of `'key': value` in the header's Python dict literal.
std::string headerField(const std::string &header, const std::string &key) {
  size_t at = header.find("'" + key + "'");
  if (at == std::string::npos)
    return "";
  at = header.find(':', at);
  if (at == std::string::npos)
    return "";
  ++at;
  while (at < header.size() && header[at] == ' ')
    ++at;
  size_t end = at;
  if (header[at] == '(') {
    end = header.find(')', at);
    return end == std::string::npos ? "" : header.substr(at, end - at + 1);
  }
  while (end < header.size() && header[end] != ',' && header[end] != '}')
    ++end;
  return header.substr(at, end - at);
}

} // namespace

StatusOr<NpyArray> readNpy(const std::string &path) {
  auto bad = [&](const std::string &why) {
    return Status(StatusCode::kInvalidArgument, path + ": " + why);
  };
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return bad("cannot open");
  std::ostringstream all;
  all << in.rdbuf();
  std::string bytes = all.str();
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0)
    return bad("not a .npy file");
  unsigned major = static_cast<unsigned char>(bytes[6]);
  size_t headerLen, headerStart;
  if (major == 1) {
    headerLen = static_cast<unsigned char>(bytes[8]) |
                (static_cast<unsigned char>(bytes[9]) << 8);
    headerStart = 10;
  } else {
    if (bytes.size() < 12)
      return bad("truncated header");
    uint32_t len;
    std::memcpy(&len, &bytes[8], 4);
    headerLen = len;
    headerStart = 12;
  }
  if (bytes.size() < headerStart + headerLen)
    return bad("truncated header");
  std::string header = bytes.substr(headerStart, headerLen);
  std::string descr = headerField(header, "descr");
  std::string fortran = headerField(header, "fortran_order");
  std::string shape = headerField(header, "shape");
  if (fortran != "False")
    return bad("Fortran-order arrays are not supported; save with np.ascontiguousarray");
  NpyArray array;
  int width = 0;
  bool fromF8 = false;
  if (descr == "'<f4'") {
    array.dtype = DType::kF32, width = 4;
  } else if (descr == "'<f8'") {
    array.dtype = DType::kF32, width = 8, fromF8 = true;
  } else if (descr == "'<i8'") {
    array.dtype = DType::kI64, width = 8;
  } else if (descr == "'<i4'") {
    array.dtype = DType::kI32, width = 4;
  } else {
    return bad("unsupported dtype " + descr + " (float32, float64, int32 or int64)");
  }
  if (shape.size() < 2)
    return bad("malformed shape in the header");
  std::istringstream dims(shape.substr(1, shape.size() - 2));
  std::string dim;
  int64_t count = 1;
  while (std::getline(dims, dim, ',')) {
    if (dim.find_first_not_of(' ') == std::string::npos)
      continue;
    int64_t d = std::stoll(dim);
    array.shape.push_back(d);
    count *= d;
  }
  size_t dataStart = headerStart + headerLen;
  if (bytes.size() - dataStart != static_cast<size_t>(count * width))
    return bad("holds " + std::to_string(bytes.size() - dataStart) +
               " data bytes, the header announces " + std::to_string(count * width));
  if (fromF8) {
    array.data.resize(count * 4);
    for (int64_t i = 0; i < count; ++i) {
      double v;
      std::memcpy(&v, &bytes[dataStart + i * 8], 8);
      float f = static_cast<float>(v);
      std::memcpy(&array.data[i * 4], &f, 4);
    }
  } else {
    array.data = bytes.substr(dataStart);
  }
  return array;
}

Status writeNpy(const std::string &path, DType dtype,
                const std::vector<int64_t> &shape, const void *data) {
  const char *descr = nullptr;
  switch (dtype) {
  case DType::kF32: descr = "<f4"; break;
  case DType::kI32: descr = "<i4"; break;
  case DType::kI64: descr = "<i8"; break;
  default:
    return Status(StatusCode::kInvalidArgument,
                  path + ": .npy export of " + dtypeName(dtype) + " is not supported");
  }
  std::string dims;
  int64_t count = 1;
  for (int64_t d : shape) {
    dims += std::to_string(d) + ", ";
    count *= d;
  }
  if (shape.size() > 1)
    dims.resize(dims.size() - 1); // "(2, 3)" but "(2,)"
  if (!dims.empty() && shape.size() > 1)
    dims.pop_back();
  std::string header = std::string("{'descr': '") + descr +
                       "', 'fortran_order': False, 'shape': (" + dims + "), }";
  // Pad with spaces so the data starts at a multiple of 64 bytes.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write("\x93NUMPY\x01\x00", 8);
  uint16_t len = static_cast<uint16_t>(header.size());
  out.write(reinterpret_cast<const char *>(&len), 2);
  out << header;
  out.write(static_cast<const char *>(data), count * dtypeBytes(dtype));
  if (!out)
    return Status(StatusCode::kUnavailable, "cannot write " + path);
  return Status::ok();
}

} // namespace dlc::rt
