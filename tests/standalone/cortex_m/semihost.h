/* Output and exit through ARM semihosting (startup.c). */
#ifndef SEMIHOST_H
#define SEMIHOST_H
void semihost_print(const char* text);
void semihost_exit(int status);
#endif
