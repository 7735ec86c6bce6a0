/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The options a replacement module is loaded with: the merge of the option sources (later
 * overrides earlier), the parser of option strings, the value forms the kernel takes, the
 * filter by the parameters of the file about to be loaded, and the whole gathering on fake
 * roots (sys/module/nvme/parameters files, a fake .ko's modinfo, a private modprobe.d read
 * by libkmod) with the twins that must not be passed: a parameter the new module lacks,
 * "(null)", an empty and an unreadable file. argv[1]: the fake .ko (tests/unit/fake-module.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libkmod.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "swap/modparams.h"
#include "fakeroot.h"
#include "tap.h"

static void copy(const char *from, const char *base, const char *rel)
{
	char p[4096], buf[65536];
	ssize_t n;
	int in = open(from, O_RDONLY), out;
	snprintf(p, sizeof(p), "%s/%s", base, rel);
	out = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			break;
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
}

static bool has_note(const struct ns_modparams *mp, const char *a, const char *b)
{
	for (size_t i = 0; i < mp->nnotes; i++)
		if (strstr(mp->notes[i], a) && (!b || strstr(mp->notes[i], b)))
			return true;
	return false;
}

static void test_merge(void)
{
	struct ns_modparams mp = {0};
	char *s;

	/* libkmod's string first, the kernel's quoting */
	CHECK(ns_modparams_add_options(&mp, "  io_queue_depth=64 hostnqn=\"nqn.a b\" flag  poll-queues=2",
				       NS_MODPARAM_CONFIG) == 0);
	CHECK(mp.n == 4);
	CHECK_STR(mp.v[1].value, "nqn.a b");
	CHECK(mp.v[2].value == NULL);
	CHECK_STR(mp.v[3].name, "poll_queues"); /* '-' is '_' as in sysfs */
	/* sysfs later: overrides, keeps the position */
	CHECK(ns_modparams_set(&mp, "io_queue_depth", "256", NS_MODPARAM_SYSFS) == 0);
	CHECK(mp.n == 4);
	CHECK_STR(mp.v[0].value, "256");
	CHECK_STR(mp.v[0].source, NS_MODPARAM_SYSFS);
	s = ns_modparams_string(&mp);
	CHECK_STR(s, "io_queue_depth=256 hostnqn=\"nqn.a b\" flag poll_queues=2");
	free(s);
	ns_modparams_free(&mp);
	s = ns_modparams_string(&mp);
	CHECK_STR(s, "");
	free(s);
}

static void test_forms(void)
{
	const char *why;

	CHECK(ns_modparam_value_ok("bool", "Y", NULL));
	CHECK(ns_modparam_value_ok("invbool", "N", NULL));
	CHECK(ns_modparam_value_ok("bool", NULL, NULL));
	CHECK(!ns_modparam_value_ok("bool", "yes please", &why) && why);
	CHECK(!ns_modparam_value_ok("int", NULL, &why) && why);
	CHECK(ns_modparam_value_ok("int", "-1", NULL));
	CHECK(ns_modparam_value_ok("uint", "65536", NULL));
	CHECK(ns_modparam_value_ok("hexint", "0x1f", NULL));
	CHECK(!ns_modparam_value_ok("uint", "0x", NULL));
	CHECK(!ns_modparam_value_ok("int", "12abc", NULL));
	CHECK(!ns_modparam_value_ok("int", "", NULL));
	CHECK(ns_modparam_value_ok("charp", "nqn.2014-08.org:uuid a", NULL));
	CHECK(!ns_modparam_value_ok("charp", "(null)", &why) && strstr(why, "(null)"));
	CHECK(!ns_modparam_value_ok("charp", "a\"b", NULL));
	CHECK(ns_modparam_value_ok("array of int", "1,2,3", NULL));
	CHECK(!ns_modparam_value_ok("array of int", "1,,3", NULL));
	CHECK(!ns_modparam_value_ok("array of int", "1,x", NULL));
	CHECK(ns_modparam_value_ok(NULL, "256", NULL)); /* module_param_cb: no parmtype */
	CHECK(!ns_modparam_value_ok(NULL, "a b", NULL));
	CHECK(!ns_modparam_value_ok(NULL, "(null)", NULL));
	CHECK(!ns_modparam_value_ok("weird", "1", &why) && why);
}

static void test_filter(void)
{
	struct ns_modparm_spec spec = {0};
	struct ns_modparams mp = {0};
	char *s;

	CHECK(ns_modparm_spec_add(&spec, "parm", "io_queue_depth:set io queue depth") == 0);
	CHECK(ns_modparm_spec_add(&spec, "parm", "use_cmb_sqes:use CMB") == 0);
	CHECK(ns_modparm_spec_add(&spec, "parmtype", "use_cmb_sqes:bool") == 0);
	CHECK(ns_modparm_spec_add(&spec, "vermagic", "6.1.0 SMP") == 0);
	CHECK(spec.n == 2 && spec.types[0] == NULL);
	CHECK_STR(spec.types[1], "bool");
	ns_modparams_set(&mp, "io_queue_depth", "256", NS_MODPARAM_SYSFS);
	ns_modparams_set(&mp, "poll_queues", "1", NS_MODPARAM_SYSFS); /* the new module lacks it */
	ns_modparams_set(&mp, "use_cmb_sqes", "maybe", NS_MODPARAM_CONFIG);
	CHECK(ns_modparams_filter(&mp, &spec, "the nvme to be loaded") == 0);
	s = ns_modparams_string(&mp);
	CHECK_STR(s, "io_queue_depth=256");
	free(s);
	CHECK(has_note(&mp, "poll_queues=1", "the nvme to be loaded lacks this parameter"));
	CHECK(has_note(&mp, "use_cmb_sqes=maybe", "bool"));
	ns_modparams_free(&mp);
	ns_modparm_spec_free(&spec);
}

/* A sysroot: sys/module values only, filtered by the fake .ko's modinfo. */
static void test_sysroot(const char *base, const char *ko)
{
	struct ns_root *root = NULL;
	struct kmod_ctx *ctx = kmod_new(NULL, NULL);
	struct ns_modparams mp;
	char *opts = NULL, *refusal = NULL, *s;

	fr_mkdirs("sys/module/nvme/parameters/broken");
	fr_put("sys/module/nvme/parameters/io_queue_depth", "%s", "256\n");
	fr_put("sys/module/nvme/parameters/sgl_threshold", "%s", "65536\n");
	fr_put("sys/module/nvme/parameters/use_cmb_sqes", "%s", "Y\n");
	fr_put("sys/module/nvme/parameters/hostnqn", "%s", "(null)\n");
	fr_put("sys/module/nvme/parameters/queues", "%s", "1,2,3\n");
	fr_put("sys/module/nvme/parameters/empty", "%s", "\n");
	fr_put("sys/module/nvme/parameters/poll_queues", "%s", "1\n"); /* the new module lacks it */
	fr_mkdirs("var/lib/numastor/modules/6.1.0-test");
	copy(ko, base, "var/lib/numastor/modules/6.1.0-test/nvme.ko");
	CHECK(ns_root_open(base, &root) == 0);
	CHECK(ctx != NULL);
	if (!root || !ctx)
		return;
	CHECK(ns_modparams_gather(root, ctx, "nvme", "var/lib/numastor/modules/6.1.0-test/nvme.ko", &mp) == 0);
	s = ns_modparams_string(&mp);
	CHECK_STR(s, "io_queue_depth=256 queues=1,2,3 sgl_threshold=65536 use_cmb_sqes=Y");
	free(s);
	CHECK(mp.refusal == NULL);
	CHECK(has_note(&mp, "poll_queues=1", "lacks this parameter"));
	CHECK(has_note(&mp, "hostnqn=(null)", "not set"));
	CHECK(has_note(&mp, "empty: empty in sysfs", NULL));
	CHECK(has_note(&mp, "broken: not passed", "cannot be read"));
	CHECK(has_note(&mp, "are not known here", "/proc/cmdline"));
	ns_modparams_free(&mp);

	/* the stock module by name under a sysroot: .numastor/modinfo/NAME */
	fr_mkdirs(".numastor/modinfo");
	fr_put(".numastor/modinfo/nvme", "%s", "vermagic=6.1.0 SMP\nparmtype=io_queue_depth:uint\nparm=queues:q\n");
	CHECK(ns_modparams_collect(root, NULL, "nvme", &opts, &refusal) == 0);
	CHECK_STR(opts, "io_queue_depth=256 queues=1,2,3");
	CHECK(refusal == NULL);
	free(opts);
	/* nothing known of the replacement: nothing passed */
	unlink(strcat(strcpy((char[4096]){0}, base), "/.numastor/modinfo/nvme"));
	CHECK(ns_modparams_gather(root, NULL, "nvme", NULL, &mp) == 0);
	CHECK(mp.n == 0);
	CHECK(has_note(&mp, "cannot be read", "none of"));
	ns_modparams_free(&mp);
	ns_root_free(root);
	kmod_unref(ctx);
}

/* The live root with a private modprobe.d (libkmod's config paths): options and commands. */
static void test_config(const char *base, const char *ko)
{
	char conf[4096];
	const char *paths[] = {conf, NULL};
	struct kmod_ctx *ctx;
	struct ns_root *root = NULL;
	char *opts = NULL, *refusal = NULL;

	snprintf(conf, sizeof(conf), "%s/modprobe.d", base);
	fr_mkdirs("modprobe.d");
	fr_put("modprobe.d/numastor-test.conf", "%s",
	       "options numastor_test_a io_queue_depth=64 hostnqn=\"nqn a\" poll_queues=2\n"
	       "options numastor_test_b use_cmb_sqes=Y\n"
	       "install numastor_test_b /sbin/modprobe --ignore-install numastor_test_b; /bin/false\n"
	       "remove numastor_test_c /bin/false\n");
	ctx = kmod_new(NULL, paths);
	CHECK(ctx != NULL);
	CHECK(ns_root_open("/", &root) == 0);
	if (!ctx || !root)
		return;
	/* twin: options, no command */
	CHECK(ns_modparams_collect_file(root, ctx, "numastor_test_a", ko, &opts, &refusal) == 0);
	CHECK_STR(opts, "io_queue_depth=64 hostnqn=\"nqn a\"");
	CHECK(refusal == NULL);
	free(opts);
	free(refusal);
	CHECK(ns_modparams_collect_file(root, ctx, "numastor_test_b", ko, &opts, &refusal) == 0);
	CHECK_STR(opts, "use_cmb_sqes=Y");
	CHECK_STR(refusal, "modprobe.d has an `install` command for numastor_test_b: numastor will not run it "
			   "through libkmod's system(); remove it or swap by hand");
	free(opts);
	free(refusal);
	CHECK(ns_modparams_collect(root, ctx, "numastor-test-c", &opts, &refusal) == 0);
	CHECK(refusal && strstr(refusal, "a `remove` command for numastor_test_c"));
	free(opts);
	free(refusal);
	ns_root_free(root);
	kmod_unref(ctx);
}

int main(int argc, char **argv)
{
	char tmpl[] = "/tmp/numastor-test-modparams.XXXXXX";
	char *base = mkdtemp(tmpl), cmd[4200], *ko = argc > 1 ? realpath(argv[1], NULL) : NULL;

	if (!base || !ko)
		return 1;
	snprintf(fr_base, sizeof(fr_base), "%s", base);
	test_merge();
	test_forms();
	test_filter();
	test_sysroot(base, ko);
	test_config(base, ko);
	free(ko);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
	if (system(cmd) != 0)
		perror("rm");
	return tap_done("modparams");
}
