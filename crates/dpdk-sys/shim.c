#include <rte_config.h>
#include <rte_errno.h>
#include <rte_version.h>
#include "shim.h"

int shim_rte_errno(void) { return rte_errno; }
const char *shim_rte_version(void) { return rte_version(); }

FILE *shim_cookie_stream(ssize_t (*write)(void *cookie, const char *buf, size_t size)) {
    cookie_io_functions_t funcs = {.read = NULL, .write = write, .seek = NULL, .close = NULL};
    return fopencookie(NULL, "w", funcs);
}

static void shim_flush_one(struct rte_mempool *mp, void *arg) {
    unsigned int lcore_id = *(const unsigned int *)arg;
    struct rte_mempool_cache *cache = rte_mempool_default_cache(mp, lcore_id);
    if (cache != NULL)
        rte_mempool_cache_flush(cache, mp);
}

void shim_mempool_flush_lcore_caches(unsigned int lcore_id) {
    rte_mempool_walk(shim_flush_one, &lcore_id);
}
