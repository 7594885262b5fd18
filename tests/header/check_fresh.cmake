# header.single_include_fresh: regenerates the single header into the build folder and checks
# that the committed single_include/nnvm/nnvm.hpp is byte-for-byte the same.
#   cmake -DSOURCE_DIR=<repo> -DOUT=<scratch file> -P check_fresh.cmake
execute_process(COMMAND "${CMAKE_COMMAND}" -DOUT=${OUT} -P "${SOURCE_DIR}/cmake/amalgamate.cmake"
                RESULT_VARIABLE failed)
if(failed)
  message(FATAL_ERROR "cmake/amalgamate.cmake failed (see above)")
endif()
set(committed "${SOURCE_DIR}/single_include/nnvm/nnvm.hpp")
execute_process(COMMAND "${CMAKE_COMMAND}" -E compare_files "${OUT}" "${committed}" RESULT_VARIABLE differs)
if(differs)
  message(FATAL_ERROR "single_include/nnvm/nnvm.hpp is stale: it differs from what the headers under "
                      "include/ and runtime/ generate now (${OUT}). Regenerate it from the repository "
                      "root with\n  cmake -P cmake/amalgamate.cmake\nor build the target `amalgamate`, "
                      "and commit the result.")
endif()
message(STATUS "single_include/nnvm/nnvm.hpp is up to date")
