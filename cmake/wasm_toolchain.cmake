# nnvm_probe_wasm(<var>): sets <var> to TRUE when this machine can build and run what
# `nnvmc compile --target wasm` writes: clang links a wasm32-wasi module using libm (clang, lld,
# wasi-libc, libclang-rt-*-dev-wasm32) and node exists. Probed once per configure.
function(nnvm_probe_wasm out)
  if(DEFINED NNVM_WASM_WORKS)
    set(${out} ${NNVM_WASM_WORKS} PARENT_SCOPE)
    return()
  endif()
  find_program(NNVM_NODE node)
  set(probe "${CMAKE_BINARY_DIR}/wasm_probe")
  file(WRITE "${probe}.c" "#include <math.h>\nfloat f(float x) { return expf(x); }\n")
  execute_process(COMMAND clang --target=wasm32-wasi -O2 -nostartfiles -Wl,--no-entry -Wl,--export=f
                          "${probe}.c" -lm -o "${probe}.wasm"
                  RESULT_VARIABLE status OUTPUT_QUIET ERROR_QUIET)
  if(status EQUAL 0 AND NNVM_NODE)
    set(works TRUE)
  else()
    set(works FALSE)
    message(WARNING "clang cannot link wasm32-wasi or node is missing: the WebAssembly tests are off "
                    "(scripts/install_deps.sh installs clang, lld, wasi-libc, libclang-rt-14-dev-wasm32, nodejs)")
  endif()
  set(NNVM_WASM_WORKS ${works} CACHE INTERNAL "clang builds wasm32-wasi and node runs it")
  set(${out} ${works} PARENT_SCOPE)
endfunction()
