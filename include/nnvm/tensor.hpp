// The kernel author's header: the tensor DSL, schedules, lowering, the reference interpreter,
// the C emitter, the GPU source emitter (CUDA, OpenCL, Metal) and the C JIT. Compiles with
// `-I include` alone. The op library is
// <nnvm/ops/ops.hpp>, the graph layer <nnvm/graph/graph.hpp>, and <nnvm/nnvm.hpp> all of it.
#pragma once

#include "nnvm/config.hpp"
#include "nnvm/error.hpp"
#include "nnvm/ir/dtype.hpp"
#include "nnvm/ir/expr.hpp"
#include "nnvm/ir/op.hpp"
#include "nnvm/ir/stmt.hpp"
#include "nnvm/ir/functor.hpp"
#include "nnvm/ir/substitute.hpp"
#include "nnvm/ir/function.hpp"
#include "nnvm/ir/printer.hpp"
#include "nnvm/ir/interval.hpp"
#include "nnvm/ir/simplify.hpp"
#include "nnvm/ir/verifier.hpp"
#include "nnvm/ndarray.hpp"
#include "nnvm/te/operation.hpp"
#include "nnvm/te/dsl.hpp"
#include "nnvm/te/scan.hpp"
#include "nnvm/schedule/schedule.hpp"
#include "nnvm/lower/interchange_reductions.hpp"
#include "nnvm/lower/pipeline.hpp"
#include "nnvm/target/arguments.hpp"
#include "nnvm/target/interpreter.hpp"
#include "nnvm/target/c_like.hpp"
#include "nnvm/target/c_emitter.hpp"
#include "nnvm/target/c_jit.hpp"
#include "nnvm/target/gpu_emitter.hpp"
