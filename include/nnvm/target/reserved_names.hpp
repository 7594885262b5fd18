// Names a kernel symbol or a generated identifier must never take: C's keywords, everything the
// C99 <math.h>, <stdint.h> and <stddef.h> that generated C includes declare (functions in their
// double, float and long double forms, and macros), glibc's extra math functions, and the C
// library functions generated code or its loader calls. A kernel named after an op or a node
// ("nan", "exp", "floor", "free") would otherwise clash with the declaration (a compile error in
// the C emitter) or, exported from a shared library, capture the calls the library makes to that
// function (LLVM artifacts). Both emitters add a suffix to a name found here.
#pragma once

#include <string>
#include <unordered_set>

#include "nnvm/config.hpp"

NNVM_BEGIN_NAMESPACE
namespace target {

inline const std::unordered_set<std::string>& reserved_c_names() {
  static const std::unordered_set<std::string> names = [] {
    std::unordered_set<std::string> s = {
        // keywords and main
        "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum", "extern",
        "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict", "return", "short", "signed",
        "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void", "volatile", "while", "main",
        "bool", "true", "false",
        // <stdint.h>, <stddef.h>
        "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t", "intptr_t",
        "uintptr_t", "intmax_t", "uintmax_t", "size_t", "ptrdiff_t", "wchar_t", "max_align_t", "offsetof", "NULL",
        // <math.h> macros and types
        "INFINITY", "NAN", "HUGE_VAL", "HUGE_VALF", "HUGE_VALL", "float_t", "double_t", "fpclassify", "isfinite",
        "isinf", "isnan", "isnormal", "signbit", "isgreater", "isgreaterequal", "isless", "islessequal",
        "islessgreater", "isunordered", "math_errhandling", "MATH_ERRNO", "MATH_ERREXCEPT", "FP_NAN", "FP_INFINITE",
        "FP_ZERO", "FP_SUBNORMAL", "FP_NORMAL", "FP_FAST_FMA", "FP_FAST_FMAF", "FP_ILOGB0", "FP_ILOGBNAN",
        // C library functions generated code or loaders call
        "memcpy", "memset", "memmove", "memcmp", "malloc", "calloc", "realloc", "free", "abort", "exit", "strlen",
        "printf", "puts", "errno"};
    // <math.h> functions (C99) and glibc's extras, each with its f and l forms.
    for (const char* f :
         {"acos", "asin", "atan", "atan2", "cos", "sin", "tan", "acosh", "asinh", "atanh", "cosh", "sinh", "tanh",
          "exp", "exp2", "expm1", "frexp", "ilogb", "ldexp", "log", "log10", "log1p", "log2", "logb", "modf", "scalbn",
          "scalbln", "cbrt", "fabs", "hypot", "pow", "sqrt", "erf", "erfc", "lgamma", "tgamma", "ceil", "floor",
          "nearbyint", "rint", "lrint", "llrint", "round", "lround", "llround", "trunc", "fmod", "remainder", "remquo",
          "copysign", "nan", "nextafter", "nexttoward", "fdim", "fmax", "fmin", "fma", "j0", "j1", "jn", "y0", "y1",
          "yn", "gamma", "drem", "finite", "significand", "scalb", "exp10", "pow10", "sincos", "lgamma_r", "roundeven",
          "isinf", "isnan"}) {
      s.insert(f);
      s.insert(std::string(f) + "f");
      s.insert(std::string(f) + "l");
    }
    return s;
  }();
  return names;
}

}  // namespace target
NNVM_END_NAMESPACE
