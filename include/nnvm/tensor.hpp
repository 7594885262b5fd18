// The umbrella header: everything a kernel author needs.
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
#include "nnvm/ndarray.hpp"
#include "nnvm/te/operation.hpp"
#include "nnvm/target/arguments.hpp"
