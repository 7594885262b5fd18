/* Bare-metal start for a Cortex-M4F under QEMU: the vector table, a reset handler that
   initializes memory and the FPU and runs main(), and the two semihosting calls the test
   harness needs (print a string, exit with a status), which QEMU's -semihosting serves. */
#include <stdint.h>

#include "semihost.h"

extern uint32_t _sidata, _sdata, _edata, _sbss, _ebss, _estack;
int main(void);

static int semihost_call(int op, const void* arg) {
  register int r0 __asm__("r0") = op;
  register const void* r1 __asm__("r1") = arg;
  __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
  return r0;
}

void semihost_print(const char* text) { semihost_call(0x04 /* SYS_WRITE0 */, text); }

void semihost_exit(int status) {
  /* SYS_EXIT: ADP_Stopped_ApplicationExit ends QEMU with 0, RunTimeErrorUnknown with 1. */
  semihost_call(0x18, (const void*)(uintptr_t)(status == 0 ? 0x20026 : 0x20024));
  for (;;) {
  }
}

void Reset_Handler(void) {
  uint32_t* src = &_sidata;
  for (uint32_t* dst = &_sdata; dst < &_edata;) *dst++ = *src++;
  for (uint32_t* dst = &_sbss; dst < &_ebss;) *dst++ = 0;
  *(volatile uint32_t*)0xE000ED88u |= 0xFu << 20; /* CPACR: CP10 and CP11 (the FPU) on */
  __asm__ volatile("dsb\n isb");
  semihost_exit(main());
}

static void Fault_Handler(void) {
  semihost_print("fault\n");
  semihost_exit(2);
}

__attribute__((section(".isr_vector"), used)) static void (*const vectors[16])(void) = {
    /* the initial stack pointer: data in a table of handlers, as the architecture defines it */
    __extension__(void (*)(void))&_estack, Reset_Handler, Fault_Handler, Fault_Handler, Fault_Handler, Fault_Handler,
    Fault_Handler};
