/* netload.h — the header C code includes; the API itself is netload_api.h. */
#ifndef NETLOAD_H
#define NETLOAD_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "netload_api.h"

#ifdef __cplusplus
}
#endif

#endif /* NETLOAD_H */
