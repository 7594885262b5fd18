// The compiler's entry points, compiled once for the libraries, tools and tests this build makes
// (the CMake library nnvm::compiler). Everything that links it gets NNVM_COMPILER_COMPILED, so its
// headers declare these functions instead of generating the whole compiler in each translation
// unit (see NNVM_COMPILER_INLINE in nnvm/config.hpp). This file defines them: it includes every
// header that holds one.
#define NNVM_COMPILER_LIBRARY_SOURCE
#include "nnvm/graph/evaluate.hpp"
#include "nnvm/graph/executor.hpp"
#include "nnvm/graph/infer.hpp"
#include "nnvm/graph/passes/common_subexpr.hpp"
#include "nnvm/graph/passes/fold_constants.hpp"
#include "nnvm/graph/passes/pipeline.hpp"
#include "nnvm/graph/passes/sink_transposes.hpp"
#include "nnvm/graph/prepare.hpp"
#include "nnvm/lower/pipeline.hpp"
#include "nnvm/target/arguments.hpp"
#include "nnvm/target/c_emitter.hpp"
#include "nnvm/target/c_jit.hpp"
#include "nnvm/target/device_split.hpp"
#include "nnvm/target/interpreter.hpp"
#include "nnvm/graph/artifact.hpp"
#include "nnvm/graph/gpu_artifact.hpp"
#include "nnvm/graph/opencl_model.hpp"
#include "nnvm/graph/standalone_c.hpp"
#include "nnvm/target/gpu_emitter.hpp"
