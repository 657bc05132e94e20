//===- Npy.cpp - NumPy .npy files for exchanging tensors ------------------===//

#include "dlc/runtime/Npy.h"

#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

namespace dlc::rt {

namespace {

/// One value of the header's Python dict literal: a string, a boolean or a
/// tuple of integers (the only kinds a .npy header holds).
struct HeaderValue {
  enum Kind { kString, kBool, kTuple } kind = kString;
  std::string text;            // the string, or "True"/"False"
  std::vector<int64_t> tuple;  // the integers of a tuple
};

/// Parses the header dict, e.g. {'descr': '<f4', 'fortran_order': False,
/// 'shape': (2, 3), }. Never throws: a malformed header, a dimension that is
/// not a non-negative integer or one past int64 is a one-line error.
class HeaderParser {
public:
  explicit HeaderParser(const std::string &text) : text(text) {}

  /// The parsed fields, or an empty map with `error` set.
  std::map<std::string, HeaderValue> parse() {
    std::map<std::string, HeaderValue> fields;
    if (!expect('{'))
      return {};
    while (true) {
      skipSpaces();
      if (peek() == '}')
        break;
      std::string key;
      if (!parseString(key, "a quoted key"))
        return {};
      if (!expect(':'))
        return {};
      HeaderValue value;
      if (!parseValue(key, value))
        return {};
      fields[key] = std::move(value);
      skipSpaces();
      if (peek() == ',') {
        ++at;
        continue;
      }
      if (peek() != '}')
        return fail("expected ',' or '}'");
    }
    ++at;
    skipSpaces();
    if (at != text.size())
      return fail("unexpected text after the dict");
    return fields;
  }

  std::string error;

private:
  char peek() const { return at < text.size() ? text[at] : '\0'; }
  void skipSpaces() {
    while (at < text.size() && (text[at] == ' ' || text[at] == '\n'))
      ++at;
  }
  std::map<std::string, HeaderValue> fail(const std::string &why) {
    if (error.empty())
      error = "malformed header: " + why + " at byte " + std::to_string(at);
    return {};
  }
  bool expect(char c) {
    skipSpaces();
    if (peek() != c) {
      fail(std::string("expected '") + c + "'");
      return false;
    }
    ++at;
    return true;
  }
  bool parseString(std::string &out, const char *what) {
    skipSpaces();
    char quote = peek();
    if (quote != '\'' && quote != '"') {
      fail(std::string("expected ") + what);
      return false;
    }
    size_t close = text.find(quote, at + 1);
    if (close == std::string::npos) {
      fail("unterminated string");
      return false;
    }
    out = text.substr(at + 1, close - at - 1);
    at = close + 1;
    return true;
  }
  bool parseValue(const std::string &key, HeaderValue &value) {
    skipSpaces();
    if (peek() == '\'' || peek() == '"') {
      value.kind = HeaderValue::kString;
      return parseString(value.text, "a string");
    }
    for (const char *word : {"True", "False"})
      if (text.compare(at, std::strlen(word), word) == 0) {
        value.kind = HeaderValue::kBool;
        value.text = word;
        at += std::strlen(word);
        return true;
      }
    if (peek() == '(') {
      value.kind = HeaderValue::kTuple;
      return parseTuple(key, value.tuple);
    }
    fail("unsupported value of '" + key + "'");
    return false;
  }
  /// "(2, 3)", "(5,)" or "()": non-negative integers that fit in int64.
  bool parseTuple(const std::string &key, std::vector<int64_t> &out) {
    ++at; // '('
    while (true) {
      skipSpaces();
      if (peek() == ')')
        break;
      size_t begin = at;
      while (at < text.size() && text[at] != ',' && text[at] != ')')
        ++at;
      std::string item = text.substr(begin, at - begin);
      while (!item.empty() && item.back() == ' ')
        item.pop_back();
      if (item.empty() || item.find_first_not_of("0123456789") != std::string::npos) {
        error = "'" + key + "' holds '" + item + "', not a non-negative integer";
        return false;
      }
      int64_t value = 0;
      for (char digit : item)
        if (__builtin_mul_overflow(value, 10, &value) ||
            __builtin_add_overflow(value, digit - '0', &value)) {
          error = "'" + key + "' holds " + item + ", which does not fit in int64";
          return false;
        }
      out.push_back(value);
      if (peek() == ',')
        ++at;
    }
    if (peek() != ')') {
      fail("unterminated tuple");
      return false;
    }
    ++at;
    return true;
  }

  const std::string &text;
  size_t at = 0;
};

std::string formatTuple(const std::vector<int64_t> &shape) {
  std::string out = "(";
  for (size_t i = 0; i < shape.size(); ++i)
    out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + (shape.size() == 1 ? ",)" : ")");
}

} // namespace

StatusOr<NpyArray> readNpy(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return Status(StatusCode::kInvalidArgument, path + ": cannot open");
  std::ostringstream all;
  all << in.rdbuf();
  return parseNpy(all.str(), path);
}

StatusOr<NpyArray> parseNpy(std::string_view bytes, const std::string &source) {
  auto bad = [&](const std::string &why) {
    return Status(StatusCode::kInvalidArgument, source + ": " + why);
  };
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0)
    return bad("not a .npy file");
  unsigned major = static_cast<unsigned char>(bytes[6]);
  unsigned minor = static_cast<unsigned char>(bytes[7]);
  if (major < 1 || major > 3 || minor != 0)
    return bad("unsupported .npy format version " + std::to_string(major) +
               "." + std::to_string(minor) + " (1.0, 2.0 or 3.0)");
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
  if (bytes.size() - headerStart < headerLen)
    return bad("truncated header");
  std::string header(bytes.substr(headerStart, headerLen));
  HeaderParser parser(header);
  std::map<std::string, HeaderValue> fields = parser.parse();
  if (!parser.error.empty())
    return bad(parser.error);
  for (const char *key : {"descr", "fortran_order", "shape"})
    if (!fields.count(key))
      return bad(std::string("the header has no '") + key + "'");
  const HeaderValue &descrValue = fields["descr"];
  const HeaderValue &fortran = fields["fortran_order"];
  const HeaderValue &shape = fields["shape"];
  if (fortran.kind != HeaderValue::kBool)
    return bad("'fortran_order' is not True or False");
  if (shape.kind != HeaderValue::kTuple)
    return bad("'shape' is not a tuple");
  if (descrValue.kind != HeaderValue::kString)
    return bad("'descr' is not a string");
  if (fortran.text == "True")
    return bad("Fortran-order arrays are not supported; save with np.ascontiguousarray");
  const std::string &descr = descrValue.text;
  NpyArray array;
  int64_t width = 0;
  bool fromF8 = false;
  if (descr == "<f4") {
    array.dtype = DType::kF32, width = 4;
  } else if (descr == "<f8") {
    array.dtype = DType::kF32, width = 8, fromF8 = true;
  } else if (descr == "<i8") {
    array.dtype = DType::kI64, width = 8;
  } else if (descr == "<i4") {
    array.dtype = DType::kI32, width = 4;
  } else {
    return bad("unsupported dtype '" + descr + "' (float32, float64, int32 or int64)");
  }
  array.shape = shape.tuple;
  int64_t count = 1, dataBytes = 0;
  for (int64_t d : array.shape)
    if (__builtin_mul_overflow(count, d, &count))
      return bad("shape " + formatTuple(array.shape) +
                 " has more elements than fit in int64");
  if (__builtin_mul_overflow(count, width, &dataBytes))
    return bad("shape " + formatTuple(array.shape) + " of " + descr +
               " has more bytes than fit in int64");
  size_t dataStart = headerStart + headerLen;
  if (bytes.size() - dataStart != static_cast<uint64_t>(dataBytes))
    return bad("holds " + std::to_string(bytes.size() - dataStart) +
               " data bytes, the header announces " + std::to_string(dataBytes));
  if (fromF8) {
    array.data.resize(count * 4);
    for (int64_t i = 0; i < count; ++i) {
      double v;
      std::memcpy(&v, &bytes[dataStart + i * 8], 8);
      float f = static_cast<float>(v);
      std::memcpy(&array.data[i * 4], &f, 4);
    }
  } else {
    array.data = std::string(bytes.substr(dataStart));
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
