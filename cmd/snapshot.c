/* SPDX-License-Identifier: GPL-2.0-or-later */
/* numastor snapshot: capture exactly what `check` reads, for replay elsewhere. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/testhook.h"
#include "base/util.h"
#include "cli.h"
#include "config.h"
#include "out/json.h"
#include "numastor.h"
#include "out/outfile.h"
#include "out/replay.h"
#include "out/snapshot.h"
#include "options.h"

static void snapshot_usage(FILE *out)
{
	fprintf(out, "Usage: numastor snapshot [-O FILE] [-R DIR]\n"
		     "\n"
		     "Capture exactly the files `numastor check` reads (with the bytes it read, links\n"
		     "as links), plus the facts that are not files (kernel release, page size, capture\n"
		     "time, modinfo, udev identity) and the check's own JSON, into a tar.gz that\n"
		     "`numastor check --snapshot FILE` replays on any machine.\n"
		     "\n");
	ns_options_usage(out, &ns_options_snapshot, 80);
	fprintf(out, "\nExit status: 0 written, 3 could not.\n");
}

static int add_text(struct ns_capture *c, const char *path, const char *text)
{
	return ns_capture_add(c, path, text, strlen(text), 0644);
}

/* What libkmod said about each module, in the key=value form a replay reads. */
static int add_modinfo(struct ns_capture *c, const struct ns_system *sys)
{
	for (size_t i = 0; i < ns_modules_count(sys->modules); i++) {
		const struct ns_module *m = ns_modules_get(sys->modules, i);
		char path[256], *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);
		int r;
		if (!f)
			return -ENOMEM;
		fprintf(f, "name=%s\n", m->name);
		if (m->state == NS_MODULE_BUILTIN)
			fprintf(f, "builtin=1\n");
		if (m->file_srcversion)
			fprintf(f, "srcversion=%s\n", m->file_srcversion);
		for (size_t k = 0; k < m->npatches; k++)
			fprintf(f, "numastor=%s\n", m->patches[k]);
		if (m->modinfo_error)
			fprintf(f, "error=%s\n", m->modinfo_error);
		fclose(f);
		snprintf(path, sizeof(path), ".numastor/modinfo/%s", m->name);
		r = add_text(c, path, buf ? buf : "");
		free(buf);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Identity libudev gave, as the udev database file a replay reads. */
static int add_udev(struct ns_capture *c, const struct ns_system *sys)
{
	for (size_t i = 0; i < sys->ndisks; i++) {
		const struct ns_disk *d = &sys->disks[i];
		const struct ns_identity *id = &d->identity;
		char path[128], *buf = NULL;
		size_t len = 0;
		FILE *f;
		int r;
		if (!d->devnum || (!id->model && !id->serial && !id->wwn && !id->by_id))
			continue;
		f = open_memstream(&buf, &len);
		if (!f)
			return -ENOMEM;
		if (id->model)
			fprintf(f, "E:ID_MODEL=%s\n", id->model);
		if (id->serial)
			fprintf(f, "E:ID_SERIAL_SHORT=%s\n", id->serial);
		if (id->wwn)
			fprintf(f, "E:ID_WWN=%s\n", id->wwn);
		if (id->by_id)
			fprintf(f, "S:%s\n", strncmp(id->by_id, "/dev/", 5) == 0 ? id->by_id + 5 : id->by_id);
		fclose(f);
		snprintf(path, sizeof(path), "run/udev/data/b%s", d->devnum);
		r = add_text(c, path, buf ? buf : "");
		free(buf);
		if (r < 0)
			return r;
	}
	return 0;
}

/* The check's JSON into a new temporary file (*fd), within its budget (-EFBIG beyond). */
static int json_spool(const struct ns_system *sys, const struct ns_findings *findings, int *fd)
{
	FILE *f;
	int r, dupfd;

	*fd = ns_snapshot_tmpfile();
	if (*fd < 0)
		return *fd;
	dupfd = dup(*fd);
	f = dupfd >= 0 ? fdopen(dupfd, "w") : NULL;
	if (!f) {
		r = -errno;
		if (dupfd >= 0)
			close(dupfd);
		return r;
	}
	r = ns_json_write_check_file(f, NS_SNAPSHOT_MAX_JSON, sys, findings, NUMASTOR_VERSION, false);
	if (fclose(f) != 0 && r == 0)
		r = -errno;
	return r;
}

/* The spooled bundle onto standard output. */
static int copy_spool(int from, int to)
{
	char buf[65536];
	ssize_t n;

	if (lseek(from, 0, SEEK_SET) < 0)
		return -errno;
	while ((n = read(from, buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		for (ssize_t off = 0; off < n;) {
			ssize_t w = write(to, buf + off, (size_t)(n - off));
			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0)
				return -errno;
			off += w;
		}
	}
	return 0;
}

int cmd_snapshot(int argc, char **argv)
{
	const char *output = NULL, *sysroot = NULL;
	struct ns_outfile of = {.fd = -1};
	char defname[256], facts[512], host[128] = "host", when[32], *why = NULL;
	struct ns_root *root = NULL;
	struct ns_capture *cap = NULL;
	struct ns_system sys;
	struct ns_findings findings = {0};
	char *hostname = NULL, *hostline = NULL, *allfacts = NULL;
	int spool = -1, jfd = -1;
	time_t now = time(NULL);
	struct tm tm;
	int c, r, code = NS_EXIT_OK;
	struct ns_cli cli;
	struct ns_getopt g;

	ns_cli_init(&cli, "snapshot", argc, argv);
	ns_getopt_init(&g, &ns_options_snapshot);
	while ((c = ns_getopt_next(&g, argc, argv)) != -1) {
		switch (c) {
		case 'O': /* -o, --output too, until 0.3.0 */
			output = optarg;
			break;
		case 'R':
			sysroot = optarg;
			break;
		case 'h':
			snapshot_usage(stdout);
			return NS_EXIT_OK;
		default:
			return ns_cli_bad_option(&cli, c, argv);
		}
	}
	if (optind < argc)
		return ns_cli_bad_usage(&cli, "unexpected argument '%s'", argv[optind]);
	gmtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	if (!output) {
		char stamp[32];
		gethostname(host, sizeof(host) - 1);
		strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
		snprintf(defname, sizeof(defname), "numastor-snapshot-%s-%s.tar.gz", host, stamp);
		output = defname;
	}
	/* before any reading: a target numastor would not replace (a device, a FIFO, a link) is
	 * said at once, and the temporary file beside the target is made (lib/out/outfile.h) */
	r = ns_outfile_open(output, &of, &why);
	if (r < 0) {
		code = why ? ns_cli_fail(&cli, NS_EXIT_UNKNOWN, "not writing %s: %s", output, why)
			   : ns_cli_fail(&cli, NS_EXIT_UNKNOWN, "cannot create a file beside %s: %s", output,
					 strerror(-r));
		free(why);
		return code;
	}
	/* libarchive is loaded, not linked: before any reading, its absence is said */
	if (ns_snapshot_archive_load(&why) < 0) {
		code = ns_cli_fail(&cli, NS_EXIT_UNKNOWN, "%s", why);
		free(why);
		ns_outfile_abort(&of);
		return code;
	}
	r = ns_root_open(sysroot, &root);
	if (r < 0) {
		ns_outfile_abort(&of);
		return ns_cli_fail(&cli, NS_EXIT_UNKNOWN, "cannot use %s as the root: %s", sysroot ? sysroot : "/",
				   strerror(-r));
	}
	cli.root = root;
	if (ns_capture_new(&cap) < 0) {
		ns_cli_fail(&cli, NS_EXIT_UNKNOWN, "out of memory");
		ns_root_free(root);
		ns_outfile_abort(&of);
		return NS_EXIT_UNKNOWN;
	}
	/* standard output gets the bundle once it is whole, from a spool: a refused one leaves
	 * nothing there either */
	if (of.through && (spool = ns_snapshot_tmpfile()) < 0) {
		code = ns_cli_fail(&cli, NS_EXIT_UNKNOWN, "cannot make a temporary file for the bundle: %s",
				   strerror(-spool));
		goto out;
	}
	r = ns_capture_start(cap, of.through ? spool : of.fd, &why);
	if (r < 0) {
		code = ns_cli_fail(&cli, NS_EXIT_UNKNOWN, "writing %s: %s", output, why ? why : strerror(-r));
		goto out;
	}
	ns_capture_attach(cap, root);
	r = ns_system_discover(root, NULL, 0, &sys);
	if (r == 0) /* check.json is what `numastor check` says: empty devices left out (they stay in the capture) */
		ns_system_hide_empty(&sys);
	if (r == 0)
		r = ns_findings_evaluate(&sys, &findings);
	if (r < 0) {
		ns_capture_detach(root);
		code = ns_cli_fail(&cli, NS_EXIT_UNKNOWN, "reading %s: %s", sysroot ? sysroot : "the live system",
				   strerror(-r));
		goto out;
	}
	snprintf(facts, sizeof(facts),
		 "numastor_version=%s\nkernel_release=%s\npage_size=%ld\ncaptured_at=%s\nprivileged=%d\n",
		 NUMASTOR_VERSION, sys.machine.kernel_release ? sys.machine.kernel_release : "", sysconf(_SC_PAGESIZE),
		 when, sys.privileged);
	/* the document's host (hostname, boot_id, machine-id) is read still recording, so that a
	 * replay of the capture says the same; the document goes to a temporary file (135 MB at
	 * 1,024 disks), then into the bundle with its size known */
	r = json_spool(&sys, &findings, &jfd);
	ns_capture_detach(root);
	if (r == -EFBIG)
		why = ns_fmt("the capture: .numastor/check.json is beyond the budget of %u MiB for the check's JSON",
			     NS_SNAPSHOT_MAX_JSON >> 20);
	/* which host it was, as the document's host.hostname says (a replay names it: lib/out/replay.h) */
	if (ns_read_str(root, "proc/sys/kernel/hostname", &hostname) < 0)
		hostname = NULL;
	if (r == 0 && (!(hostline = ns_replay_host_line(hostname)) || asprintf(&allfacts, "%s%s", facts, hostline) < 0))
		r = -ENOMEM;
	if (r == 0)
		r = add_text(cap, NS_REPLAY_FACTS, allfacts);
	if (r == 0)
		r = ns_capture_add_fd(cap, ".numastor/check.json", jfd, 0644);
	if (r == 0 && ns_root_is_live(root))
		r = add_modinfo(cap, &sys);
	if (r == 0 && sys.udev)
		r = add_udev(cap, &sys);
	if (r == 0 || (r == -EFBIG && !why)) {
		r = ns_capture_finish(cap, &why);
		if (r == 0 && of.through)
			r = copy_spool(spool, of.fd);
	}
	if (r == 0)
		r = ns_outfile_commit(&of);
	if (r == -EFBIG && why) {
		code = ns_cli_fail(&cli, NS_EXIT_UNKNOWN, "not writing %s, a replay would refuse it: %s", output, why);
		goto out;
	}
	if (r < 0) {
		code = ns_cli_fail(&cli, NS_EXIT_UNKNOWN, "writing %s: %s", output, why ? why : strerror(-r));
		goto out;
	}
	/* NUMASTOR_TEST_CAPTURE_STATS (test builds): what the capture held, for
	 * tests/check-snapshot.py's memory case */
	if (ns_test_hook("NUMASTOR_TEST_CAPTURE_STATS")) {
		struct ns_capture_stats st;
		ns_capture_stats(cap, &st);
		fprintf(stderr,
			"capture: entries=%zu nodes=%zu book_bytes=%zu held_max=%zu duplicates=%zu late_links=%zu\n",
			st.entries, st.nodes, st.book_bytes, st.held_max, st.duplicates, st.late_links);
	}
	/* written through to standard output, the bundle is on it: the line goes to stderr */
	fprintf(of.through ? stderr : stdout,
		"wrote %s (%zu entries, %zu devices); replay it with: numastor check --snapshot %s\n",
		of.through ? "the bundle to standard output" : output, ns_capture_count(cap), sys.ndisks,
		of.through ? "FILE" : output);
out:
	ns_outfile_abort(&of); /* nothing once committed; else the temporary file goes */
	free(why);
	if (spool >= 0)
		close(spool);
	if (jfd >= 0)
		close(jfd);
	free(hostname);
	free(hostline);
	free(allfacts);
	ns_findings_free(&findings);
	ns_system_free(&sys);
	ns_capture_free(cap);
	ns_root_free(root);
	return code;
}
