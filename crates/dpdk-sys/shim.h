/* Small C helpers for what bindgen cannot express directly. */
#ifndef PMDT_DPDK_SHIM_H
#define PMDT_DPDK_SHIM_H
#include <stdint.h>

/* rte_errno is a per-lcore (thread-local) macro: read it through a function. */
int pmdt_rte_errno(void);
/* rte_version() as a plain string. */
const char *pmdt_rte_version(void);

#endif
