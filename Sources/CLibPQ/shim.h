#ifndef IAP_RECONCILE_CLIBPQ_SHIM_H
#define IAP_RECONCILE_CLIBPQ_SHIM_H
#include <libpq-fe.h>
#endif
