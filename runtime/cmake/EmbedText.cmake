# Writes the bytes of IN as a string constant named NAME into OUT: kernel
# text kept in a real file (a header the host also compiles, a CUDA
# fragment) becomes a string of the runtime byte for byte, whatever it holds.
#   cmake -DIN=<file> -DOUT=<file.inc> -DNAME=<identifier> -P EmbedText.cmake
file(READ "${IN}" hex HEX)
string(LENGTH "${hex}" digits)
file(RELATIVE_PATH source "${CMAKE_CURRENT_LIST_DIR}/../.." "${IN}")
set(text "// Generated from ${source} by runtime/cmake/EmbedText.cmake: do not edit.\n")
string(APPEND text "static const char ${NAME}[] =\n    \"\"")
# Every byte as a \x escape (which no character of the text can end), 32
# bytes a line.
set(at 0)
while(at LESS digits)
  string(SUBSTRING "${hex}" ${at} 64 chunk)
  string(REGEX REPLACE "(..)" "\\\\x\\1" chunk "${chunk}")
  string(APPEND text "\n    \"${chunk}\"")
  math(EXPR at "${at} + 64")
endwhile()
string(APPEND text ";\n")
# Rewritten only when it changes, so that its includers rebuild only then.
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
  if(old STREQUAL text)
    return()
  endif()
endif()
file(WRITE "${OUT}" "${text}")
