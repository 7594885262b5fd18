// The operator library: op definitions, the registry with the built-in ops, and build/jit.
#pragma once

#include "nnvm/ops/builtin.hpp"  // the registry includes it only where the op list is not compiled
#include "nnvm/ops/registry.hpp"
#include "nnvm/ops/build.hpp"
#include "nnvm/ops/schedule_generic.hpp"
