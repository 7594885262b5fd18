// Namespace and version macros shared by every nnvm header.
#pragma once

#define NNVM_VERSION_MAJOR 0
#define NNVM_VERSION_MINOR 1
#define NNVM_VERSION_PATCH 0

// Public code lives in an inline versioned namespace so that nnvm links beside MXNet's
// historical `nnvm::` symbols and beside other nnvm versions without ODR clashes.
#define NNVM_BEGIN_NAMESPACE \
  namespace nnvm {           \
  inline namespace v0_1 {
#define NNVM_END_NAMESPACE \
  }                        \
  }

// The compiler's entry points (graph::prepare, graph::link, lower::lower, the emitters, the graph
// passes, ...) are inline functions of this header-only library, so every translation unit that
// compiles a graph generated code for the whole compiler again (about 1 MB of machine code, most
// of such a file's compile time). A program that links the CMake library nnvm::compiler
// (src/compiler.cpp) gets NNVM_COMPILER_COMPILED from it: those functions are then only declared
// in the headers and defined once, in that library. Header-only users, who do not define the
// macro, get them inline as before.
//
// An entry point is declared with NNVM_COMPILER_INLINE, and its definition is wrapped in
// `#if NNVM_COMPILER_DEFINITIONS`.
#if defined(NNVM_COMPILER_COMPILED)
#define NNVM_COMPILER_INLINE
#if defined(NNVM_COMPILER_LIBRARY_SOURCE)
#define NNVM_COMPILER_DEFINITIONS 1
#else
#define NNVM_COMPILER_DEFINITIONS 0
#endif
#else
#define NNVM_COMPILER_INLINE inline
#define NNVM_COMPILER_DEFINITIONS 1
#endif
