#include <rte_config.h>
#include <rte_errno.h>
#include <rte_version.h>
#include "shim.h"

int pmdt_rte_errno(void) { return rte_errno; }
const char *pmdt_rte_version(void) { return rte_version(); }
