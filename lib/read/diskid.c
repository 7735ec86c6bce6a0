/* SPDX-License-Identifier: GPL-2.0-or-later */
#define _GNU_SOURCE
#include "read/diskid.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read/root.h"
#include "base/util.h"

/* The kinds sysfs prints (scsi_vpd_lun_id: naa. eui. t10.; nvme wwid_show: uuid. eui. nvme.)
 * and NVMe's nguid. as some tools spell it. Every kind but t10 is hex (with uuid's dashes). */
static const char *const kinds[] = {"naa.", "eui.", "nguid.", "uuid.", "t10.", "nvme."};

/* Copy s without leading/trailing blanks, inner runs of blanks made one space. */
static char *squeeze(const char *s, bool lower)
{
	char *out = malloc(strlen(s) + 1), *o = out;
	bool blank = false;

	if (!out)
		return NULL;
	while (*s && isspace((unsigned char)*s))
		s++;
	for (; *s; s++) {
		if (isspace((unsigned char)*s)) {
			blank = true;
			continue;
		}
		if (blank)
			*o++ = ' ';
		blank = false;
		*o++ = lower ? (char)tolower((unsigned char)*s) : *s;
	}
	*o = '\0';
	return out;
}

char *ns_diskid_normalise_wwn(const char *s)
{
	char *t, *out = NULL;

	if (!s)
		return NULL;
	t = squeeze(s, false);
	if (!t)
		return NULL;
	if (!*t) {
		free(t);
		return NULL;
	}
	/* udev's ID_WWN / ID_WWN_WITH_EXTENSION (scsi_id, ata_id): the NAA name in hex */
	if ((t[0] == '0') && (t[1] == 'x' || t[1] == 'X') && t[2]) {
		char *hex = squeeze(t + 2, true);
		out = hex ? ns_fmt("naa.%s", hex) : NULL;
		free(hex);
		free(t);
		return out;
	}
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		size_t len = strlen(kinds[k]);
		if (strncasecmp(t, kinds[k], len) != 0)
			continue;
		/* t10 is vendor text (case kept); the others are hex */
		char *body = squeeze(t + len, strcmp(kinds[k], "t10.") != 0);
		out = body ? ns_fmt("%s%s", kinds[k], body) : NULL;
		free(body);
		free(t);
		return out;
	}
	/* an unknown form: compared as it is, trimmed */
	return t;
}

static bool one_component(const char *disk)
{
	return disk && *disk && !strchr(disk, '/') && strcmp(disk, ".") != 0 && strcmp(disk, "..") != 0;
}

static int read_nonblank(struct ns_root *root, const char *path, char **out)
{
	char *v = NULL, *t;
	int r = ns_read_str(root, path, &v);

	if (r < 0)
		return r;
	t = squeeze(v, false);
	free(v);
	if (!t)
		return -ENOMEM;
	if (!*t) {
		free(t);
		return -ENODATA;
	}
	*out = t;
	return 0;
}

int ns_diskid_from_sysfs(struct ns_root *root, const char *disk, char **id)
{
	static const char *const wwid_files[] = {"wwid", "device/wwid"};
	static const char *const serial_files[] = {"device/serial", "serial"};
	char path[512], *v = NULL;
	long nsid;

	*id = NULL;
	if (!one_component(disk))
		return -EINVAL;
	/* some SCSI devices fail to read wwid (EINVAL): take the next source */
	for (size_t i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "sys/block/%s/%s", disk, wwid_files[i]);
		if (read_nonblank(root, path, &v) < 0)
			continue;
		char *n = ns_diskid_normalise_wwn(v);
		free(v);
		if (!n)
			return -ENOMEM;
		*id = ns_fmt("wwid:%s", n);
		free(n);
		return *id ? 0 : -ENOMEM;
	}
	for (size_t i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "sys/block/%s/%s", disk, serial_files[i]);
		if (read_nonblank(root, path, &v) == 0)
			break;
	}
	if (!v)
		return -ENOENT;
	snprintf(path, sizeof(path), "sys/block/%s/nsid", disk);
	if (ns_read_long(root, path, &nsid, NULL) == 0)
		*id = ns_fmt("serial:%s/nsid:%ld", v, nsid);
	else
		*id = ns_fmt("serial:%s", v);
	free(v);
	return *id ? 0 : -ENOMEM;
}
