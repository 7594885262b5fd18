/* The program lesson 6 runs on the Cortex-M4F (and, built with -DHOST, on this machine): one
   inference from a static arena, checked against the plain-loop reference in expected.h. */
#include <math.h>
#include <stdint.h>

#include "expected.h"
#include "model.h"

#ifdef HOST
#include <stdio.h>
static void say(const char* s) { fputs(s, stdout); }
#else
#include "semihost.h"
static void say(const char* s) { semihost_print(s); }
#endif

/* The arena: its size is a compile-time constant, so it can be a static array (RAM that the
   linker map shows) and a budget can be checked before anything runs. */
static uint8_t arena[NNVM_KWS_ARENA_BYTES] __attribute__((aligned(NNVM_KWS_ARENA_ALIGN)));
static float probabilities[NNVM_KWS_OUTPUT_0_ELEMENTS];

typedef char arena_fits_in_32_kib[NNVM_KWS_ARENA_BYTES <= 32 * 1024 ? 1 : -1];

int main(void) {
  static const char* const words[] = {"word 0", "word 1", "word 2"};
  int best = 0, ok = 1, k;
  if (kws_run(example_input, probabilities, arena) != NNVM_KWS_OK) {
    say("kws_run failed\n");
    return 1;
  }
  for (k = 0; k < NNVM_KWS_OUTPUT_0_ELEMENTS; ++k) {
    if (!(fabsf(probabilities[k] - expected_output[k]) <= 1e-5f + 1e-3f * fabsf(expected_output[k]))) ok = 0;
    if (probabilities[k] > probabilities[best]) best = k;
  }
  say("heard: ");
  say(words[best]);
  say(ok ? "; matches the plain-loop reference: PASS\n" : "; differs from the plain-loop reference: FAIL\n");
  return ok ? 0 : 1;
}
