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
