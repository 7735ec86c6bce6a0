/* SPDX-License-Identifier: GPL-2.0-or-later */
#define _GNU_SOURCE
#include "read/fabric.h"

#include <arpa/inet.h>
#include <errno.h>
#include <net/route.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/notes.h"
#include "base/util.h"

/* a bond over a VLAN over a NIC, at most */
#define LOWER_DEPTH 4

static int take_field(char **dst, const char *val, size_t n)
{
	free(*dst);
	*dst = strndup(val, n);
	return *dst ? 0 : -ENOMEM;
}

int ns_fabric_parse_address(const char *address, struct ns_fabric *f)
{
	static const char *const keys[] = {"traddr", "trsvcid", "host_traddr", "src_addr", "host_iface"};
	char **dst[] = {&f->traddr, &f->trsvcid, &f->host_traddr, &f->src_addr, &f->host_iface};
	const char *p = address;

	while (p && *p) {
		const char *end = strchr(p, ','), *eq;
		size_t n = end ? (size_t)(end - p) : strlen(p);
		eq = memchr(p, '=', n);
		if (eq) {
			size_t kl = (size_t)(eq - p);
			for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
				if (strlen(keys[k]) == kl && strncmp(p, keys[k], kl) == 0) {
					int r = take_field(dst[k], eq + 1, n - kl - 1);
					if (r < 0)
						return r;
				}
			}
		}
		p = end ? end + 1 : NULL;
	}
	return 0;
}

static unsigned popcount32(uint32_t v)
{
	unsigned c = 0;
	for (; v; v &= v - 1)
		c++;
	return c;
}

/*
 * proc/net/route (the main table; the kernel prints each __be32 as a host-order %08X, so the
 * bytes compare as they are in memory): the interface of the longest prefix that holds a,
 * the lower metric on a tie. connected: only routes without a gateway (the subnet an address
 * of the interface sits in).
 */
static int route4(struct ns_root *root, const struct in_addr *a, bool connected, char **ifname)
{
	char *txt = NULL, *save = NULL, *line;
	uint32_t addr;
	int best_len = -1, r;
	unsigned long best_metric = 0;

	memcpy(&addr, a, sizeof(addr));
	*ifname = NULL;
	if ((r = ns_read_str(root, "proc/net/route", &txt)) < 0)
		return r;
	for (line = strtok_r(txt, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char ifc[64];
		unsigned int dest, gw, flags, mask;
		unsigned long metric;
		int refcnt, use;
		if (sscanf(line, "%63s %x %x %x %d %d %lu %x", ifc, &dest, &gw, &flags, &refcnt, &use, &metric,
			   &mask) != 8)
			continue; /* the header */
		if (!(flags & RTF_UP) || (flags & RTF_REJECT) || (connected && gw != 0))
			continue;
		if ((addr & mask) != (dest & mask))
			continue;
		int len = (int)popcount32(mask);
		if (len > best_len || (len == best_len && metric < best_metric)) {
			char *dup = strdup(ifc);
			if (!dup) {
				free(txt);
				return -ENOMEM;
			}
			free(*ifname);
			*ifname = dup;
			best_len = len;
			best_metric = metric;
		}
	}
	free(txt);
	return *ifname ? 0 : -ENOENT;
}

static bool hex128(const char *s, unsigned char out[16])
{
	for (int i = 0; i < 16; i++) {
		unsigned v;
		if (sscanf(s + 2 * i, "%2x", &v) != 1)
			return false;
		out[i] = (unsigned char)v;
	}
	return true;
}

static bool prefix_match(const unsigned char *a, const unsigned char *b, unsigned plen)
{
	unsigned full = plen / 8, rest = plen % 8;
	if (memcmp(a, b, full) != 0)
		return false;
	if (rest == 0)
		return true;
	unsigned char m = (unsigned char)(0xff << (8 - rest));
	return (a[full] & m) == (b[full] & m);
}

/*
 * proc/net/ipv6_route (every table: the local table's routes go through lo, which is skipped):
 * "DEST PLEN SRC PLEN NEXTHOP METRIC REFCNT USE FLAGS IFACE", hex. As route4.
 */
static int route6(struct ns_root *root, const struct in6_addr *a, bool connected, char **ifname)
{
	char *txt = NULL, *save = NULL, *line;
	int best_len = -1, r;
	unsigned long best_metric = 0;
	static const unsigned char zero[16];

	*ifname = NULL;
	if ((r = ns_read_str(root, "proc/net/ipv6_route", &txt)) < 0)
		return r;
	for (line = strtok_r(txt, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char dest[33], src[33], nh[33], ifc[64];
		unsigned plen, splen, flags;
		unsigned long metric, refcnt, use;
		unsigned char d[16], n[16];
		if (sscanf(line, "%32s %x %32s %x %32s %lx %lx %lx %x %63s", dest, &plen, src, &splen, nh, &metric,
			   &refcnt, &use, &flags, ifc) != 10)
			continue;
		if (strlen(dest) != 32 || strlen(nh) != 32 || plen > 128 || !hex128(dest, d) || !hex128(nh, n))
			continue;
		if (!(flags & RTF_UP) || (flags & RTF_REJECT) || strcmp(ifc, "lo") == 0)
			continue;
		if (connected && memcmp(n, zero, 16) != 0)
			continue;
		if (!prefix_match(a->s6_addr, d, plen))
			continue;
		if ((int)plen > best_len || ((int)plen == best_len && metric < best_metric)) {
			char *dup = strdup(ifc);
			if (!dup) {
				free(txt);
				return -ENOMEM;
			}
			free(*ifname);
			*ifname = dup;
			best_len = (int)plen;
			best_metric = metric;
		}
	}
	free(txt);
	return *ifname ? 0 : -ENOENT;
}

/* The interface that holds IPv6 address a (proc/net/if_inet6: "ADDR IDX PLEN SCOPE FLAGS IFACE"). */
static int if_inet6(struct ns_root *root, const struct in6_addr *a, char **ifname)
{
	char *txt = NULL, *save = NULL, *line;
	int r;

	*ifname = NULL;
	if ((r = ns_read_str(root, "proc/net/if_inet6", &txt)) < 0)
		return r;
	for (line = strtok_r(txt, "\n", &save); line && !*ifname; line = strtok_r(NULL, "\n", &save)) {
		char addr[33], ifc[64];
		unsigned idx, plen, scope, flags;
		unsigned char b[16];
		if (sscanf(line, "%32s %x %x %x %x %63s", addr, &idx, &plen, &scope, &flags, ifc) != 6 ||
		    strlen(addr) != 32 || !hex128(addr, b))
			continue;
		if (memcmp(b, a->s6_addr, 16) == 0 && !(*ifname = strdup(ifc))) {
			free(txt);
			return -ENOMEM;
		}
	}
	free(txt);
	return *ifname ? 0 : -ENOENT;
}

/*
 * The netdev that carries an IP transport: host_iface when the controller was bound to one,
 * else the interface src_addr (the connection's own address) sits on, else the route to traddr.
 */
static int ip_netdev(struct ns_root *root, struct ns_fabric *f, char **ifname)
{
	struct in_addr a4;
	struct in6_addr a6;
	int r;

	*ifname = NULL;
	if (f->host_iface && *f->host_iface) {
		f->carrier_basis = "host_iface";
		return (*ifname = strdup(f->host_iface)) ? 0 : -ENOMEM;
	}
	if (f->src_addr) {
		if (inet_pton(AF_INET, f->src_addr, &a4) == 1)
			r = route4(root, &a4, true, ifname);
		else if (inet_pton(AF_INET6, f->src_addr, &a6) == 1)
			r = if_inet6(root, &a6, ifname);
		else
			r = -EINVAL;
		if (r == 0) {
			f->carrier_basis = "src_addr";
			return 0;
		}
		if (r == -ENOMEM)
			return r;
	}
	if (!f->traddr)
		return -ENOENT;
	if (inet_pton(AF_INET, f->traddr, &a4) == 1) {
		r = route4(root, &a4, false, ifname);
		f->carrier_basis = "route";
	} else if (inet_pton(AF_INET6, f->traddr, &a6) == 1) {
		r = route6(root, &a6, false, ifname);
		f->carrier_basis = "ipv6_route";
	} else {
		return -EINVAL;
	}
	if (r < 0)
		f->carrier_basis = NULL;
	return r;
}

/*
 * The device under a netdev: its device link; a VLAN or a bond with a single lower device
 * (lower_X) leads to that one's. Several lowers have no one device: reason says so.
 */
static int netdev_device(struct ns_root *root, const char *ifname, int depth, char **device, char **reason,
			 struct ns_notes *notes)
{
	char p[512], **names = NULL, *lower = NULL;
	size_t n = 0, nlower = 0;
	int r;

	*device = NULL;
	snprintf(p, sizeof(p), "sys/class/net/%s", ifname);
	if ((r = ns_probe(root, p)) <= 0) {
		*reason = r == 0 ? ns_fmt("netdev %s is not in /sys/class/net", ifname)
				 : ns_fmt("/%s could not be read: %s", p, strerror(-r));
		return *reason ? 0 : -ENOMEM;
	}
	snprintf(p, sizeof(p), "sys/class/net/%s/device", ifname);
	if ((r = ns_realpath(root, p, device)) == 0)
		return 0;
	if (r == -ENOMEM)
		return r;
	if (r != -ENOENT) { /* a link there but unreadable: the device is not told, nor is it virtual */
		ns_note_read(notes, ifname, "fabric.carrier_device", p, r, NULL);
		*reason = ns_fmt("/%s could not be read: %s", p, strerror(-r));
		return *reason ? 0 : -ENOMEM;
	}
	snprintf(p, sizeof(p), "sys/class/net/%s", ifname);
	if (ns_list_dir(root, p, &names, &n) == 0) {
		for (size_t i = 0; i < n; i++)
			if (strncmp(names[i], "lower_", 6) == 0 && nlower++ == 0)
				lower = strdup(names[i] + 6);
		ns_strv_free(names, n);
	}
	if (nlower == 1 && lower && depth < LOWER_DEPTH) {
		r = netdev_device(root, lower, depth + 1, device, reason, notes);
		free(lower);
		return r;
	}
	free(lower);
	*reason = nlower > 1 ? ns_fmt("netdev %s has %zu lower devices: no one device carries it", ifname, nlower)
			     : ns_fmt("netdev %s is virtual: no device link and no lower device", ifname);
	return *reason ? 0 : -ENOMEM;
}

/* The IB device on the same device as the netdev (IPoIB or RoCE): sys/class/infiniband/X/device. */
static int ib_device_of(struct ns_root *root, const char *device, char **ibdev)
{
	char **names = NULL, p[512];
	size_t n = 0;
	int r;

	*ibdev = NULL;
	if ((r = ns_list_dir(root, "sys/class/infiniband", &names, &n)) < 0)
		return r;
	for (size_t i = 0; i < n && !*ibdev; i++) {
		char *real = NULL;
		snprintf(p, sizeof(p), "sys/class/infiniband/%s/device", names[i]);
		if (ns_realpath(root, p, &real) == 0 && strcmp(real, device) == 0)
			*ibdev = strdup(names[i]);
		free(real);
	}
	ns_strv_free(names, n);
	return *ibdev ? 0 : -ENOENT;
}

/* The port name in host_traddr "nn-0x...:pn-0x...", with its 0x. */
static const char *fc_port(const char *host_traddr)
{
	const char *p = strstr(host_traddr, "pn-");
	return p ? p + 3 : NULL;
}

/* The FC host whose port_name is the controller's host_traddr's pn-. */
static int fc_carrier(struct ns_root *root, struct ns_fabric *f)
{
	char **names = NULL, p[512];
	size_t n = 0;
	const char *want = f->host_traddr ? fc_port(f->host_traddr) : NULL;
	int r;

	if (!want) {
		f->reason = ns_fmt("nvme-fc: the address names no host port (host_traddr pn-)");
		return f->reason ? 0 : -ENOMEM;
	}
	if ((r = ns_list_dir(root, "sys/class/fc_host", &names, &n)) < 0 && r != -ENOENT)
		return r;
	for (size_t i = 0; r == 0 && i < n && !f->carrier; i++) {
		char *pn = NULL;
		snprintf(p, sizeof(p), "sys/class/fc_host/%s/port_name", names[i]);
		if (ns_read_str(root, p, &pn) == 0 && strcasecmp(pn, want) == 0) {
			snprintf(p, sizeof(p), "sys/class/fc_host/%s/device", names[i]);
			if (!(f->carrier = strdup(names[i])))
				r = -ENOMEM;
			else if (ns_realpath(root, p, &f->carrier_device) == -ENOMEM)
				r = -ENOMEM;
			f->carrier_kind = "fc-host";
			f->carrier_basis = "host_traddr";
		}
		free(pn);
	}
	ns_strv_free(names, n);
	if (r < 0)
		return r;
	if (!f->carrier)
		f->reason = ns_fmt("nvme-fc: no FC host has port_name %s", want);
	else if (!f->carrier_device)
		f->reason = ns_fmt("FC host %s has no device link", f->carrier);
	else
		return 0;
	return f->reason ? 0 : -ENOMEM;
}

static int ip_carrier(struct ns_root *root, struct ns_fabric *f, bool rdma, struct ns_notes *notes)
{
	char *ifname = NULL, *device = NULL, *ibdev = NULL;
	int r = ip_netdev(root, f, &ifname);

	if (r == -ENOMEM)
		return r;
	if (r < 0) {
		f->reason = f->traddr ? ns_fmt("no route to %s in /proc/net/route or /proc/net/ipv6_route", f->traddr)
				      : ns_fmt("the address names no traddr");
		return f->reason ? 0 : -ENOMEM;
	}
	if ((r = netdev_device(root, ifname, 0, &device, &f->reason, notes)) < 0) {
		free(ifname);
		return r;
	}
	if (rdma && device && ib_device_of(root, device, &ibdev) == 0) {
		f->carrier = ibdev;
		f->carrier_kind = "ib-device";
		free(ifname);
	} else {
		f->carrier = ifname;
		f->carrier_kind = "netdev";
	}
	f->carrier_device = device;
	return 0;
}

int ns_fabric_read(struct ns_root *root, const char *ctrl_syspath, struct ns_fabric *f, struct ns_notes *notes)
{
	char p[4096];
	int r;

	memset(f, 0, sizeof(*f));
	snprintf(p, sizeof(p), "%s/transport", ctrl_syspath);
	if ((r = ns_read_str(root, p, &f->transport)) < 0)
		return r == -ENOMEM ? r : -ENOENT;
	if (strcmp(f->transport, "pcie") == 0) {
		ns_fabric_free(f);
		return -ENOENT;
	}
	snprintf(p, sizeof(p), "%s/address", ctrl_syspath);
	r = ns_read_str(root, p, &f->address);
	if (r == -ENOMEM || (r == 0 && (r = ns_fabric_parse_address(f->address, f)) < 0)) {
		ns_fabric_free(f);
		return r;
	}
	if (strcmp(f->transport, "tcp") == 0 || strcmp(f->transport, "rdma") == 0)
		r = ip_carrier(root, f, strcmp(f->transport, "rdma") == 0, notes);
	else if (strcmp(f->transport, "fc") == 0)
		r = fc_carrier(root, f);
	else if (strcmp(f->transport, "loop") == 0)
		r = (f->reason = ns_fmt("nvme-loop: the target is this host; no device carries it")) ? 0 : -ENOMEM;
	else
		r = (f->reason = ns_fmt("transport %s: numastor does not know what carries it", f->transport))
			    ? 0
			    : -ENOMEM;
	if (r < 0)
		ns_fabric_free(f);
	return r;
}

void ns_fabric_free(struct ns_fabric *f)
{
	free(f->transport);
	free(f->address);
	free(f->traddr);
	free(f->trsvcid);
	free(f->host_traddr);
	free(f->src_addr);
	free(f->host_iface);
	free(f->carrier);
	free(f->carrier_device);
	free(f->reason);
	memset(f, 0, sizeof(*f));
}
