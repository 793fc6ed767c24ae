/* errors.h — nvmlReturn_t names and strings for the simulator. */
#ifndef SIM_ERRORS_H
#define SIM_ERRORS_H

/* The string nvmlErrorString returns for a code ("Unknown Error" if unknown). */
const char *sim_error_string(int code);
/* Parses "NOT_SUPPORTED", "NVML_ERROR_NOT_SUPPORTED" or "3". Returns 0 or -1. */
int sim_error_parse(const char *s, int *code);

#endif
