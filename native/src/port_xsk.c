/*
 * port_xsk.c — the AF_XDP sockets of a port's driver, tracked across its open
 * and close (the workaround below): which sockets of this process each open
 * port owns, and those its driver left open at the close, closed.
 */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "port.h"

#ifndef AF_XDP
#define AF_XDP 44
#endif
#define PORT_MAX_XSKS 64

/* Per open port, the AF_XDP sockets its driver opened (only net_af_xdp ports have any). */
static struct {
	ino_t xsks[PORT_MAX_XSKS];
	unsigned int n;
} owned[RTE_MAX_ETHPORTS];

/* 1 when fd is an AF_XDP socket, with its inode in *ino. */
static int
fd_is_xsk(int fd, ino_t *ino)
{
	struct stat st;
	socklen_t len;
	int domain;

	if (fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode))
		return 0;
	len = sizeof(domain);
	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) != 0 || domain != AF_XDP)
		return 0;
	*ino = st.st_ino;
	return 1;
}

/* 1 when an open port other than `except` owns the AF_XDP socket `ino`. */
static int
xsk_owned(ino_t ino, uint16_t except)
{
	unsigned int p, i;

	for (p = 0; p < RTE_MAX_ETHPORTS; p++)
		for (i = 0; p != except && i < owned[p].n; i++)
			if (owned[p].xsks[i] == ino)
				return 1;
	return 0;
}

/*
 * This process's AF_XDP sockets that no open port but `except` owns: up to
 * `max` fds and inodes. Returns how many.
 */
static unsigned int
unowned_xsks(uint16_t except, int *fds, ino_t *inos, unsigned int max)
{
	DIR *dir = opendir("/proc/self/fd");
	struct dirent *de;
	unsigned int n = 0;
	char *end;
	long fd;

	if (dir == NULL)
		return 0;
	while (n < max && (de = readdir(dir)) != NULL) {
		fd = strtol(de->d_name, &end, 10);
		if (end == de->d_name || *end != '\0' || fd == dirfd(dir))
			continue;
		if (fd_is_xsk((int)fd, &inos[n]) && !xsk_owned(inos[n], except))
			fds[n++] = (int)fd;
	}
	closedir(dir);
	return n;
}

/*
 * DPDK 22.11's af_xdp driver deletes a queue's XDP socket at close but never
 * its UMEM, whose fd is that same socket: the socket stays bound to the
 * interface's queue until the process exits, and the next open of that queue,
 * here or by the engine that waited for this port's lock, fails ("Failed to
 * create xsk socket", EINVAL). The sockets its open created are recorded, and
 * those left open after its close are closed here.
 */
void
netload_port_xsks_record(uint16_t port_id)
{
	int fds[PORT_MAX_XSKS];

	owned[port_id].n = unowned_xsks(port_id, fds, owned[port_id].xsks, PORT_MAX_XSKS);
}

void
netload_port_xsks_release(uint16_t port_id, const char *device, int close_left)
{
	int fds[PORT_MAX_XSKS];
	ino_t inos[PORT_MAX_XSKS];
	unsigned int n, i;

	if (close_left) {
		n = unowned_xsks(port_id, fds, inos, PORT_MAX_XSKS);
		for (i = 0; i < n; i++)
			close(fds[i]);
		if (n > 0)
			NETLOAD_LOG(INFO, "port %u (%s): closed %u AF_XDP socket(s) its driver "
					"left bound to the interface\n", port_id, device, n);
	}
	memset(&owned[port_id], 0, sizeof(owned[port_id]));
}
