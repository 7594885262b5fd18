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
