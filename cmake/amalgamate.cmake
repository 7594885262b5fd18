# Writes single_include/nnvm/nnvm.hpp: include/nnvm/nnvm.hpp with every project header it
# reaches (under include/) pasted in place, each once, in the order the preprocessor
# would first meet it. System includes stay as they are.
#
#   cmake -P cmake/amalgamate.cmake                   regenerates the committed header
#   cmake -DOUT=<file> -P cmake/amalgamate.cmake      writes it elsewhere (the freshness test)
#
# Being a CMake script keeps Python out of the build. The output depends only on the headers'
# text, so it is byte-for-byte reproducible; the file is rewritten only when it changes.
cmake_minimum_required(VERSION 3.20)

get_filename_component(NNVM_ROOT "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)
set(NNVM_INCLUDE_ROOTS "${NNVM_ROOT}/include")
set(NNVM_UMBRELLA "${NNVM_ROOT}/include/nnvm/nnvm.hpp")
if(NOT DEFINED OUT)
  set(OUT "${NNVM_ROOT}/single_include/nnvm/nnvm.hpp")
endif()

# CMake lists split on ';' and treat '[', ']' and '\' specially, so those characters are swapped
# for control bytes (which never occur in the headers) while the text is handled line by line.
string(ASCII 1 NNVM_SEMI)
string(ASCII 2 NNVM_LBRACKET)
string(ASCII 3 NNVM_RBRACKET)
string(ASCII 4 NNVM_BACKSLASH)

function(nnvm_escape in out)
  string(REPLACE "\\" "${NNVM_BACKSLASH}" s "${in}")
  string(REPLACE ";" "${NNVM_SEMI}" s "${s}")
  string(REPLACE "[" "${NNVM_LBRACKET}" s "${s}")
  string(REPLACE "]" "${NNVM_RBRACKET}" s "${s}")
  set(${out} "${s}" PARENT_SCOPE)
endfunction()

function(nnvm_unescape in out)
  string(REPLACE "${NNVM_BACKSLASH}" "\\" s "${in}")
  string(REPLACE "${NNVM_SEMI}" ";" s "${s}")
  string(REPLACE "${NNVM_LBRACKET}" "[" s "${s}")
  string(REPLACE "${NNVM_RBRACKET}" "]" s "${s}")
  set(${out} "${s}" PARENT_SCOPE)
endfunction()

# Quoted includes resolve as GCC and Clang do: the including file's folder, then the -I roots.
function(nnvm_resolve name from_dir out_path out_display)
  foreach(dir "${from_dir}" ${NNVM_INCLUDE_ROOTS})
    if(EXISTS "${dir}/${name}" AND NOT IS_DIRECTORY "${dir}/${name}")
      get_filename_component(path "${dir}/${name}" REALPATH)
      set(${out_display} "${path}" PARENT_SCOPE)
      foreach(root ${NNVM_INCLUDE_ROOTS})
        file(RELATIVE_PATH rel "${root}" "${path}")
        if(NOT rel MATCHES "^\\.\\./")
          set(${out_display} "${rel}" PARENT_SCOPE)
        endif()
      endforeach()
      set(${out_path} "${path}" PARENT_SCOPE)
      return()
    endif()
  endforeach()
  set(${out_path} "" PARENT_SCOPE)
endfunction()

# Pastes one header into the output (a global property, since the recursion has no shared
# scope). A header is marked seen when it is entered, exactly like #pragma once, so an include
# cycle (ir/interval.hpp <-> ir/simplify.hpp) comes out in the same order as in a normal build.
function(nnvm_inline path display)
  set_property(GLOBAL APPEND PROPERTY NNVM_SEEN "${path}")
  file(READ "${path}" text)
  string(REGEX REPLACE "\n$" "" text "${text}")
  nnvm_escape("${text}" text)
  string(REPLACE "\n" ";" lines "${text}")
  get_filename_component(dir "${path}" DIRECTORY)

  # Tracks #if nesting, so that a project include under a condition (which one-copy pasting
  # cannot honour) is an error instead of a silently different header. An include guard around
  # the whole file (kernel_abi.h) is the one allowed outer condition. The one conditional
  # include kept is the built-in op list under `#ifndef NNVM_BUILTIN_OPS_COMPILED`
  # (ops/registry.hpp): the single header is header-only, so there the condition always holds
  # (its preamble refuses the macro).
  set(depth 0)
  set(header_only_depth -1)
  set(allowed_depth 0)
  set(directives 0)
  set(guard "")
  set(chunk "// begin ${display}\n")
  set(lineno 0)
  foreach(line IN LISTS lines)
    math(EXPR lineno "${lineno} + 1")
    if(NOT line MATCHES "^[ \t]*#")
      string(APPEND chunk "${line}\n")
      continue()
    endif()
    if(line MATCHES "^[ \t]*#[ \t]*pragma[ \t]+once[ \t]*$")
      continue()
    endif()
    math(EXPR directives "${directives} + 1")
    if(line MATCHES "^[ \t]*#[ \t]*ifndef[ \t]+([A-Za-z0-9_]+)")
      if(directives EQUAL 1)
        set(guard "${CMAKE_MATCH_1}")
      endif()
      math(EXPR depth "${depth} + 1")
      math(EXPR outermost "${allowed_depth} + 1")
      if(CMAKE_MATCH_1 STREQUAL "NNVM_BUILTIN_OPS_COMPILED" AND depth EQUAL outermost)
        set(header_only_depth ${depth})
      endif()
    elseif(line MATCHES "^[ \t]*#[ \t]*if(def)?([^A-Za-z0-9_]|$)")
      math(EXPR depth "${depth} + 1")
    elseif(line MATCHES "^[ \t]*#[ \t]*endif([^A-Za-z0-9_]|$)")
      if(depth EQUAL header_only_depth)
        set(header_only_depth -1)
      endif()
      math(EXPR depth "${depth} - 1")
    elseif(line MATCHES "^[ \t]*#[ \t]*define[ \t]+([A-Za-z0-9_]+)" AND directives EQUAL 2
           AND CMAKE_MATCH_1 STREQUAL guard AND NOT guard STREQUAL "")
      set(allowed_depth 1)
    elseif(line MATCHES "^[ \t]*#[ \t]*include[ \t]*(\"([^\"]+)\"|<(nnvm/[^>]+)>)")
      # Quoted includes are always the project's; <nnvm/...> is too when it exists here.
      if(NOT CMAKE_MATCH_2 STREQUAL "")
        set(name "${CMAKE_MATCH_2}")
        nnvm_resolve("${name}" "${dir}" child child_display)
        if(child STREQUAL "")
          message(FATAL_ERROR "amalgamate: ${display}:${lineno}: cannot find \"${name}\" under "
                              "the folder of the file or include/")
        endif()
      else()
        set(name "${CMAKE_MATCH_3}")
        list(GET NNVM_INCLUDE_ROOTS 0 first_root)
        nnvm_resolve("${name}" "${first_root}" child child_display)
        if(child STREQUAL "")
          string(APPEND chunk "${line}\n")
          continue()
        endif()
      endif()
      if(depth GREATER allowed_depth AND NOT depth EQUAL header_only_depth)
        message(FATAL_ERROR "amalgamate: ${display}:${lineno}: \"${name}\" is included under "
                            "#if; the single header cannot reproduce a conditional include")
      endif()
      get_property(seen GLOBAL PROPERTY NNVM_SEEN)
      if(NOT child IN_LIST seen)
        set_property(GLOBAL APPEND_STRING PROPERTY NNVM_TEXT "${chunk}")
        set(chunk "")
        nnvm_inline("${child}" "${child_display}")
      endif()
      continue()
    endif()
    string(APPEND chunk "${line}\n")
  endforeach()
  string(APPEND chunk "// end ${display}\n")
  set_property(GLOBAL APPEND_STRING PROPERTY NNVM_TEXT "${chunk}")
endfunction()

file(STRINGS "${NNVM_ROOT}/include/nnvm/config.hpp" version_lines REGEX "^#define NNVM_VERSION_")
foreach(part MAJOR MINOR PATCH)
  string(REGEX MATCH "#define NNVM_VERSION_${part} ([0-9]+)" _ "${version_lines}")
  if(CMAKE_MATCH_1 STREQUAL "")
    message(FATAL_ERROR "amalgamate: NNVM_VERSION_${part} not found in include/nnvm/config.hpp")
  endif()
  set(version_${part} "${CMAKE_MATCH_1}")
endforeach()

set_property(GLOBAL PROPERTY NNVM_SEEN "")
set_property(GLOBAL PROPERTY NNVM_TEXT "")
nnvm_inline("${NNVM_UMBRELLA}" "nnvm/nnvm.hpp")
get_property(body GLOBAL PROPERTY NNVM_TEXT)
nnvm_unescape("${body}" body)

string(CONCAT header
  "// nnvm ${version_MAJOR}.${version_MINOR}.${version_PATCH}, single header generated from include/nnvm/nnvm.hpp and the\n"
  "// headers it includes. Do not edit. Regenerate with: cmake -P cmake/amalgamate.cmake\n"
  "// (or build the target `amalgamate`).\n"
  "#pragma once\n"
  "#ifdef NNVM_BUILTIN_OPS_COMPILED\n"
  "#error \"the single header is header-only: it holds the built-in op list, which NNVM_BUILTIN_OPS_COMPILED leaves out\"\n"
  "#endif\n"
  "\n")

get_filename_component(out_dir "${OUT}" DIRECTORY)
file(MAKE_DIRECTORY "${out_dir}")
file(WRITE "${OUT}.tmp" "${header}${body}")
execute_process(COMMAND "${CMAKE_COMMAND}" -E copy_if_different "${OUT}.tmp" "${OUT}"
                RESULT_VARIABLE copy_failed)
file(REMOVE "${OUT}.tmp")
if(copy_failed)
  message(FATAL_ERROR "amalgamate: cannot write ${OUT}")
endif()
