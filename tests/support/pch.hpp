// Precompiled for every test file: doctest and the whole nnvm core.
#pragma once
#include <doctest/doctest.h>
#include <map>

#include "nnvm/nnvm.hpp"
