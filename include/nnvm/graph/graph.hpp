// The graph layer: the IR (node.hpp), the builder, shape/dtype inference, the printers,
// constant evaluation and the executor (compile + run).
#pragma once

#include "nnvm/graph/builder.hpp"
#include "nnvm/graph/evaluate.hpp"
#include "nnvm/graph/executor.hpp"
#include "nnvm/graph/infer.hpp"
#include "nnvm/graph/node.hpp"
#include "nnvm/graph/printer.hpp"
