// The graph layer: the IR (node.hpp), the builder, shape/dtype inference and the printers.
#pragma once

#include "nnvm/graph/builder.hpp"
#include "nnvm/graph/infer.hpp"
#include "nnvm/graph/node.hpp"
#include "nnvm/graph/printer.hpp"
