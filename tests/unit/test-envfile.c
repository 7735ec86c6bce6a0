/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * irqbalance's banned CPUs as its readers read them (issue 28, item 3), one table: each form of
 * an options file (/etc/default/irqbalance, sourced by a shell or read by systemd's
 * EnvironmentFile=) and of the daemon's environ, with the CPUs irqbalance 1.9 would ban, or the
 * refusal (the line numastor cannot be sure of, or the value that does not parse). No form may
 * give a set other than irqbalance's: a narrower one would let fix place IRQs on banned CPUs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>

#include "read/envfile.h"
#include "tap.h"

/* what a case must give */
enum want_kind {
	SET,   /* banned CPUs (want: a CPU list, "" none) */
	DOUBT, /* refused at line `line`, its reason holding `want` */
	VALUE, /* refused: the value used does not parse (err) */
};

struct fcase {
	const char *what, *text;
	enum want_kind kind;
	const char *want;
	unsigned line;
	int err;
};

#define DEBIAN_DEFAULT                                                                      \
	"# irqbalance is a daemon process that distributes interrupts across\n"             \
	"# CPUs on SMP systems.  The default is to rebalance once every 10\n"               \
	"# seconds.  This is the environment file that is specified to systemd via the\n"   \
	"# EnvironmentFile key in the service unit file (or via whatever method the init\n" \
	"# system you're using has).\n#\n"                                                  \
	"#IRQBALANCE_ONESHOT=\n#IRQBALANCE_BANNED_CPULIST=\n#IRQBALANCE_ARGS=\n"

static const struct fcase files[] = {
	/* the forms: each a refusal or the set irqbalance takes */
	{"debian default", DEBIAN_DEFAULT, SET, ""},
	{"plain", DEBIAN_DEFAULT "IRQBALANCE_BANNED_CPULIST=0-3\n", SET, "0-3"},
	{"blank after =", DEBIAN_DEFAULT "IRQBALANCE_BANNED_CPULIST= 0-3\n", DOUBT, "a command", 10},
	{"blank before =", DEBIAN_DEFAULT "IRQBALANCE_BANNED_CPULIST =0-3\n", DOUBT, "a command", 10},
	{"export", DEBIAN_DEFAULT "export IRQBALANCE_BANNED_CPULIST=0-3\n", DOUBT, "export", 10},
	{"empty then set", "IRQBALANCE_BANNED_CPULIST=\nIRQBALANCE_BANNED_CPULIST=0-3\n", SET, "0-3"},
	{"last wins", "IRQBALANCE_BANNED_CPULIST=4-63\nIRQBALANCE_BANNED_CPULIST=0-3\n", SET, "0-3"},
	{"last wins, empty", "IRQBALANCE_BANNED_CPULIST=0-3\nIRQBALANCE_BANNED_CPULIST=\n", SET, ""},
	/* what both readers take alike */
	{"blanks around the line", " \t IRQBALANCE_BANNED_CPULIST=0-3 \t\n", SET, "0-3"},
	{"double quotes", "IRQBALANCE_BANNED_CPULIST=\"0-3\"\n", SET, "0-3"},
	{"single quotes", "IRQBALANCE_BANNED_CPULIST='0-3,8'  \n", SET, "0-3,8"},
	{"quoted blanks", "IRQBALANCE_BANNED_CPULIST=\" 0-3 \"\n", SET, "0-3"},
	{"empty quotes", "IRQBALANCE_BANNED_CPULIST=\"\"\n", SET, ""},
	{"commented out", "#IRQBALANCE_BANNED_CPULIST=0-3\n  # IRQBALANCE_BANNED_CPULIST=0-3\n", SET, ""},
	{"# inside a value", "IRQBALANCE_ARGS=a#b\n", SET, ""},
	{"other variables", "IRQBALANCE_ONESHOT=yes IRQBALANCE_ARGS=\"--foreground --journal\"\n", SET, ""},
	{"export another", "export IRQBALANCE_ARGS='--journal'\nexport IRQBALANCE_BANNED_CPULIST\n", SET, ""},
	{"no final newline", "IRQBALANCE_BANNED_CPULIST=2", SET, "2"},
	{"comment with a backslash inside", "# a \\ b\nIRQBALANCE_BANNED_CPULIST=1\n", SET, "1"},
	{"comment ends the file with a backslash", "IRQBALANCE_BANNED_CPULIST=1\n# \\", SET, "1"},
	{"invalid UTF-8 in a comment", "# \xff\nIRQBALANCE_BANNED_CPULIST=1\n", SET, "1"},
	/* where the readers part, or a shell alone decides: the line is named */
	{"trailing comment", "IRQBALANCE_BANNED_CPULIST=0-3 # the RT CPUs\n", DOUBT, "comment after the value", 1},
	{"two words", "IRQBALANCE_BANNED_CPULIST=0-3 4\n", DOUBT, "a command", 1},
	{"two assignments", "A=1 IRQBALANCE_BANNED_CPULIST=0-3\n", DOUBT, "more than one word", 1},
	{"assignment then ours", "IRQBALANCE_BANNED_CPULIST=0-3 A=1\n", DOUBT, "more than one word", 1},
	{"parts", "IRQBALANCE_BANNED_CPULIST=0-\"3\"\n", DOUBT, "several quoted and unquoted parts", 1},
	{"quoted parts", "IRQBALANCE_BANNED_CPULIST=\"0-\"'3'\n", DOUBT, "several quoted", 1},
	{"tilde", "IRQBALANCE_BANNED_CPULIST=~\n", DOUBT, "~", 1},
	{"variable", "CPUS=0-3\nIRQBALANCE_BANNED_CPULIST=$CPUS\n", DOUBT, "expansion", 2},
	{"variable in quotes", "IRQBALANCE_BANNED_CPULIST=\"${CPUS}\"\n", DOUBT, "expansion", 1},
	{"command substitution", "IRQBALANCE_BANNED_CPULIST=$(cat /etc/rt-cpus)\n", DOUBT, "expansion", 1},
	{"backticks", "IRQBALANCE_BANNED_CPULIST=`cat /etc/rt-cpus`\n", DOUBT, "expansion", 1},
	{"continuation", "IRQBALANCE_BANNED_CPULIST=0-\\\n3\n", DOUBT, "expansion or escape", 1},
	{"escape in quotes", "IRQBALANCE_BANNED_CPULIST=\"0-3\\\"\"\n", DOUBT, "expansion or escape", 1},
	{"open quote", "IRQBALANCE_BANNED_CPULIST=\"0-3\nIRQBALANCE_ARGS=\"\n", DOUBT, "quote left open", 1},
	{"open quote hiding a line", "A='\nIRQBALANCE_BANNED_CPULIST=0-3\n'\n", DOUBT, "quote left open", 1},
	{"sourcing", ". /etc/irqbalance.local\nIRQBALANCE_BANNED_CPULIST=0-3\n", DOUBT, "a command", 1},
	{"semicolon", "IRQBALANCE_BANNED_CPULIST=0-3;\n", DOUBT, "operator", 1},
	{"systemd's ; comment", "; IRQBALANCE_BANNED_CPULIST=4-7\nIRQBALANCE_BANNED_CPULIST=0-3\n", DOUBT, "operator",
	 1},
	{"and-list", "[ -e /x ] && IRQBALANCE_BANNED_CPULIST=0-3\n", DOUBT, "", 1},
	{"carriage return", "IRQBALANCE_BANNED_CPULIST=0-3\r\n", DOUBT, "carriage return", 1},
	{"carriage return in a comment", "# x\rIRQBALANCE_BANNED_CPULIST=4-7\n", DOUBT, "carriage return", 1},
	{"comment continued by systemd", "# note \\\nIRQBALANCE_BANNED_CPULIST=0-3\n", DOUBT, "backslash", 1},
	{"invalid UTF-8", "IRQBALANCE_ARGS=\xff\nIRQBALANCE_BANNED_CPULIST=0-3\n", DOUBT, "UTF-8", 1},
	{"a noncharacter", "IRQBALANCE_ARGS=\xef\xbf\xbe\nIRQBALANCE_BANNED_CPULIST=0-3\n", DOUBT, "noncharacter", 1},
	{"valid UTF-8", "IRQBALANCE_ARGS='--x=\xc3\xa9'\nIRQBALANCE_BANNED_CPULIST=0-3\n", SET, "0-3"},
	{"another variable expanded", "IRQBALANCE_ARGS=\"$ARGS\"\n", DOUBT, "expansion", 1},
	{"a doubt after the value", "IRQBALANCE_BANNED_CPULIST=0-3\nunset IRQBALANCE_BANNED_CPULIST\n", DOUBT,
	 "a command", 2},
	{"quoted export", "\"export\" IRQBALANCE_BANNED_CPULIST=0-3\n", DOUBT, "a command", 1},
	{"export of a non-name", "export -n IRQBALANCE_BANNED_CPULIST\n", DOUBT, "a command", 1},
	/* the mask, and which of the two irqbalance 1.9 reads */
	{"mask", "IRQBALANCE_BANNED_CPUS=f\n", SET, "0-3"},
	{"mask, padded", "IRQBALANCE_BANNED_CPUS=0000000f\n", SET, "0-3"},
	{"mask, leading zero group", "IRQBALANCE_BANNED_CPUS=00000000,0000000f\n", SET, "0-3"},
	{"mask, two groups", "IRQBALANCE_BANNED_CPUS=f,00000001\n", SET, "0,32-35"},
	{"mask, short group", "IRQBALANCE_BANNED_CPUS=f,1\n", SET, "0,32-35"},
	{"mask, upper case", "IRQBALANCE_BANNED_CPUS=F0\n", SET, "4-7"},
	{"mask, zeros over 8 digits", "IRQBALANCE_BANNED_CPUS=000000000f\n", SET, "0-3"},
	{"mask, zero", "IRQBALANCE_BANNED_CPUS=0\n", SET, ""},
	{"mask before list", "IRQBALANCE_BANNED_CPULIST=8-9\nIRQBALANCE_BANNED_CPUS=f\n", SET, "0-3"},
	{"list before mask in the file", "IRQBALANCE_BANNED_CPUS=f\nIRQBALANCE_BANNED_CPULIST=8-9\n", SET, "0-3"},
	{"empty mask is unset", "IRQBALANCE_BANNED_CPUS=\nIRQBALANCE_BANNED_CPULIST=8-9\n", SET, "8-9"},
	{"empty list and mask", "IRQBALANCE_BANNED_CPUS=\"\"\nIRQBALANCE_BANNED_CPULIST=''\n", SET, ""},
	{"mask over 32 bits a group", "IRQBALANCE_BANNED_CPUS=100000000\n", VALUE, NULL, 0, -EINVAL},
	{"mask with 0x", "IRQBALANCE_BANNED_CPUS=0xf\n", VALUE, NULL, 0, -EINVAL},
	{"mask, empty group", "IRQBALANCE_BANNED_CPUS=f,,1\n", VALUE, NULL, 0, -EINVAL},
	{"mask, blanks only", "IRQBALANCE_BANNED_CPUS=' '\nIRQBALANCE_BANNED_CPULIST=1\n", VALUE, NULL, 0, -EINVAL},
	{"mask beyond the CPUs", "IRQBALANCE_BANNED_CPUS=1,00000000,00000000\n", VALUE, NULL, 0, -ERANGE},
	/* lists irqbalance reads otherwise than numastor would: refused, never a narrower set */
	{"trailing comma", "IRQBALANCE_BANNED_CPULIST=0-3,\n", VALUE, NULL, 0, -EINVAL},
	{"blank inside", "IRQBALANCE_BANNED_CPULIST='0, 1'\n", VALUE, NULL, 0, -EINVAL},
	{"empty item", "IRQBALANCE_BANNED_CPULIST=0-3,,5\n", VALUE, NULL, 0, -EINVAL},
	{"blanks only", "IRQBALANCE_BANNED_CPULIST=' '\n", VALUE, NULL, 0, -EINVAL},
	{"(null)", "IRQBALANCE_BANNED_CPULIST='(null)'\n", VALUE, NULL, 0, -EINVAL},
	{"reversed", "IRQBALANCE_BANNED_CPULIST=3-0\n", VALUE, NULL, 0, -EINVAL},
	{"beyond the CPUs", "IRQBALANCE_BANNED_CPULIST=0-64\n", VALUE, NULL, 0, -ERANGE},
	{"dash", "IRQBALANCE_BANNED_CPULIST=-\n", VALUE, NULL, 0, -EINVAL},
};

/* the daemon's environ: NUL-separated entries (n bytes, the last one may lack its NUL) */
struct ecase {
	const char *what;
	const char *env;
	size_t len;
	const char *want; /* banned CPUs; NULL: neither variable in it */
};

#define E(what, lit, want)                       \
	{                                        \
		what, lit, sizeof(lit) - 1, want \
	}
static const struct ecase envs[] = {
	E("shadowed by another value", "LANG=C\0X=a IRQBALANCE_BANNED_CPULIST=4-63\0IRQBALANCE_BANNED_CPULIST=0-3\0",
	  "0-3"),
	E("only inside another value", "X=a IRQBALANCE_BANNED_CPULIST=4-63\0", NULL),
	E("getenv takes the first", "IRQBALANCE_BANNED_CPULIST=0-3\0IRQBALANCE_BANNED_CPULIST=4-63\0", "0-3"),
	E("unterminated last entry", "A=1\0IRQBALANCE_BANNED_CPULIST=0-3", "0-3"),
	E("a longer name", "IRQBALANCE_BANNED_CPULISTS=0-3\0", NULL),
	E("no =", "IRQBALANCE_BANNED_CPULIST\0", NULL),
	E("empty", "", NULL),
	E("mask first", "IRQBALANCE_BANNED_CPULIST=8-9\0IRQBALANCE_BANNED_CPUS=f\0", "0-3"),
	E("blanks around", "IRQBALANCE_BANNED_CPULIST= 0-3 \n\0", "0-3"),
	E("empty value", "IRQBALANCE_BANNED_CPULIST=\0", ""),
};

static char *set_text(const struct ns_cpuset *s)
{
	char *t = NULL;
	return ns_cpuset_format(s, &t) == 0 ? t : NULL;
}

static void file_case(const struct fcase *c)
{
	static const char *const keys[] = {NS_IRQBALANCE_BANNED_MASK, NS_IRQBALANCE_BANNED_LIST};
	struct ns_envfile_doubt doubt;
	struct ns_cpuset s = {0};
	enum ns_ban_from from;
	char *v[2];
	unsigned lines[2];
	int r = ns_envfile_get(c->text, keys, 2, v, lines, &doubt);

	if (c->kind == DOUBT) {
		bool ok = r == -EINVAL && doubt.line == c->line && doubt.why && strstr(doubt.why, c->want) &&
			  doubt.text && !strchr(doubt.text, '\n') && !v[0] && !v[1];
		CHECK(ok);
		if (!ok)
			fprintf(stderr, "  %s: r=%d line %u (want %u) why '%s' text '%s'\n", c->what, r, doubt.line,
				c->line, doubt.why ? doubt.why : "", doubt.text ? doubt.text : "");
		ns_envfile_doubt_free(&doubt);
		return;
	}
	CHECK(r == 0 && doubt.line == 0 && !doubt.text);
	if (r != 0) {
		fprintf(stderr, "  %s: refused at line %u: %s\n", c->what, doubt.line, doubt.why);
		ns_envfile_doubt_free(&doubt);
		return;
	}
	r = ns_irqbalance_banned(v[0], v[1], 64, &s, &from);
	if (c->kind == VALUE) {
		CHECK(r == c->err && !s.known && ns_cpuset_count(&s) == 0);
		if (r != c->err)
			fprintf(stderr, "  %s: r=%d, want %d\n", c->what, r, c->err);
	} else {
		char *t = r == 0 ? set_text(&s) : NULL;
		CHECK(r == 0 && s.known && t && strcmp(t, c->want) == 0);
		if (!t || strcmp(t, c->want) != 0)
			fprintf(stderr, "  %s: r=%d banned '%s', want '%s'\n", c->what, r, t ? t : "?", c->want);
		free(t);
	}
	ns_cpuset_clear(&s);
	free(v[0]);
	free(v[1]);
}

static void env_case(const struct ecase *c)
{
	struct ns_cpuset s = {0};
	enum ns_ban_from from;
	char *mask = NULL, *list = NULL, *t = NULL;
	int r = ns_environ_get(c->env, c->len, NS_IRQBALANCE_BANNED_MASK, &mask);

	CHECK(r == 0 && ns_environ_get(c->env, c->len, NS_IRQBALANCE_BANNED_LIST, &list) == 0);
	CHECK(!c->want == (!mask && !list));
	if (c->want) {
		r = ns_irqbalance_banned(mask, list, 64, &s, &from);
		t = r == 0 ? set_text(&s) : NULL;
		CHECK(t && strcmp(t, c->want) == 0);
		if (!t || strcmp(t, c->want) != 0)
			fprintf(stderr, "  environ %s: banned '%s', want '%s'\n", c->what, t ? t : "?", c->want);
	}
	free(t);
	free(mask);
	free(list);
	ns_cpuset_clear(&s);
}

int main(void)
{
	struct ns_cpuset s = {0};
	enum ns_ban_from from;
	struct ns_envfile_doubt doubt;
	const char *const one[] = {"K"};
	char *v[1];
	unsigned line[1];

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		file_case(&files[i]);
	for (size_t i = 0; i < sizeof(envs) / sizeof(envs[0]); i++)
		env_case(&envs[i]);

	/* which variable was read, and the line of the last assignment */
	CHECK(ns_irqbalance_banned("f", "8-9", 64, &s, &from) == 0 && from == NS_BAN_MASK);
	CHECK(ns_irqbalance_banned("", "8-9", 64, &s, &from) == 0 && from == NS_BAN_LIST);
	CHECK(ns_irqbalance_banned(NULL, "", 64, &s, &from) == 0 && from == NS_BAN_NONE && s.known);
	CHECK(ns_irqbalance_banned("zz", "8-9", 64, &s, &from) == -EINVAL && from == NS_BAN_MASK && !s.known);
	/* irqbalance's cpumask_t holds 4096 CPUs: past them it keeps the ones before, so a kernel
	 * with kernel_max 8191 still has no ban list naming CPU 4096 */
	CHECK(ns_irqbalance_banned(NULL, "0-3,4096", 8192, &s, &from) == -ERANGE && !s.known);
	CHECK(ns_irqbalance_banned(NULL, "0-3,4095", 8192, &s, &from) == 0 && ns_cpuset_count(&s) == 5);
	{
		char wide[1 + 128 * 9 + 1] = "1"; /* CPU 4096 in the mask form */
		for (int g = 0; g < 128; g++)
			strcat(wide, ",00000000");
		CHECK(ns_irqbalance_banned(wide, NULL, 8192, &s, &from) == -ERANGE && !s.known);
		wide[0] = '0'; /* no CPU: fine */
		CHECK(ns_irqbalance_banned(wide, NULL, 8192, &s, &from) == 0 && ns_cpuset_count(&s) == 0);
	}
	ns_cpuset_clear(&s);
	CHECK(ns_envfile_get("K=1\n\nK=2\nL=3\n", one, 1, v, line, &doubt) == 0 && line[0] == 3);
	CHECK_STR(v[0], "2");
	free(v[0]);
	CHECK(ns_envfile_get("", one, 1, v, line, &doubt) == 0 && !v[0] && line[0] == 0);
	CHECK(ns_envfile_get("L=1", one, 1, v, NULL, &doubt) == 0 && !v[0]);
	/* a doubt leaves no value behind, even one set on an earlier line */
	CHECK(ns_envfile_get("K=1\nK=2 x\n", one, 1, v, line, &doubt) == -EINVAL && !v[0] && line[0] == 0);
	CHECK(doubt.line == 2);
	CHECK_STR(doubt.text, "K=2 x");
	ns_envfile_doubt_free(&doubt);
	return tap_done("envfile");
}
