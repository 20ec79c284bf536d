// avahi-client for the CAvahi module (pkg-config: avahi-client).
#ifndef SWEEPER_CAVAHI_SHIM_H
#define SWEEPER_CAVAHI_SHIM_H
#include <avahi-client/client.h>
#include <avahi-client/lookup.h>
#include <avahi-client/publish.h>
#include <avahi-common/alternative.h>
#include <avahi-common/error.h>
#include <avahi-common/malloc.h>
#include <avahi-common/strlst.h>
#include <avahi-common/thread-watch.h>

// Enum values as plain constants: some are macros or anonymous enums that
// Swift imports awkwardly.
static const int sweeper_avahi_if_unspec = AVAHI_IF_UNSPEC;
static const int sweeper_avahi_proto_unspec = AVAHI_PROTO_UNSPEC;
static const int sweeper_avahi_proto_inet6 = AVAHI_PROTO_INET6;
#endif
