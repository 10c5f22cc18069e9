/* Small C helpers for what bindgen cannot express directly. */
#ifndef DPDK_SYS_SHIM_H
#define DPDK_SYS_SHIM_H
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* rte_errno is a per-lcore (thread-local) macro: read it through a function. */
int shim_rte_errno(void);
/* rte_version() as a plain string. */
const char *shim_rte_version(void);
/* A write-only stdio stream whose writes go to `write` (glibc's fopencookie, which
 * the libc crate does not bind): for rte_openlog_stream. NULL on failure. */
FILE *shim_cookie_stream(ssize_t (*write)(void *cookie, const char *buf, size_t size));

/* Returns what lcore `lcore_id`'s cache holds in every mempool to the pool (for a
 * non-EAL thread about to give its lcore id back). Call it on that thread. */
void shim_mempool_flush_lcore_caches(unsigned int lcore_id);

#endif
