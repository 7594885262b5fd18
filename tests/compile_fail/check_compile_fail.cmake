# Runs the compiler on SOURCE (syntax only) and checks the outcome its first line announces.
# Usage: cmake -DCXX=<compiler> -DINCLUDE_DIR=<dir> -DSOURCE=<file.cpp> -P check_compile_fail.cmake
# file(READ), not file(STRINGS): the sentences contain semicolons, which a CMake list would split.
file(READ "${SOURCE}" text)
string(REGEX MATCH "^[^\n]*" header "${text}")
execute_process(COMMAND "${CXX}" -std=c++20 -fsyntax-only "-I${INCLUDE_DIR}" "${SOURCE}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)

if(header STREQUAL "// expect: compiles")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${SOURCE} should compile but the compiler failed:\n${out}")
  endif()
  return()
endif()

if(NOT header MATCHES "^// expect-error: (.+)$")
  message(FATAL_ERROR "${SOURCE} must start with `// expect-error: <sentence>` or `// expect: compiles`")
endif()
set(sentence "${CMAKE_MATCH_1}")
if(rc EQUAL 0)
  message(FATAL_ERROR "${SOURCE} compiled, but it must fail with: ${sentence}")
endif()
string(FIND "${out}" "${sentence}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "${SOURCE} failed to compile, but without the sentence \"${sentence}\":\n${out}")
endif()
# An optional second line `// expect-also: <text>`: text the diagnostic must contain besides
# the sentence, such as a name that only a template argument can carry.
string(REGEX MATCH "^[^\n]*\n// expect-also: ([^\n]+)" also "${text}")
if(also)
  string(FIND "${out}" "${CMAKE_MATCH_1}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${SOURCE} failed to compile, but its diagnostic lacks \"${CMAKE_MATCH_1}\":\n${out}")
  endif()
endif()
# One mistake must give one error, not a cascade.
string(REGEX MATCHALL "error:" errors "${out}")
list(LENGTH errors count)
if(NOT count EQUAL 1)
  message(FATAL_ERROR "${SOURCE} gave ${count} errors; expected exactly one:\n${out}")
endif()
