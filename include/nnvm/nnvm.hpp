// Everything: the kernel author's header (<nnvm/tensor.hpp>), the op library and the graph layer
// (compile and run whole models). The single header single_include/nnvm/nnvm.hpp is this file
// with every header it reaches pasted in.
#pragma once

#include "nnvm/tensor.hpp"
#include "nnvm/ops/ops.hpp"
#include "nnvm/graph/graph.hpp"
