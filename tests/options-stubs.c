/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The commands' functions that cmd/options-numastor.c's dispatch table names, for the programs
 * that link the option tables without the commands (tests/unit/test-options.c,
 * tests/options-dump.c). Neither calls them; each says "could not run" if one ever did.
 */
int cmd_check(int argc, char **argv);
int cmd_probe(int argc, char **argv);
int cmd_trace(int argc, char **argv);
int cmd_fix(int argc, char **argv);
int cmd_snapshot(int argc, char **argv);
int cmd_irqbalance_policy(int argc, char **argv);
int cmd_check(int argc, char **argv)
{
	return argc && argv ? 3 : 3;
}
int cmd_probe(int argc, char **argv)
{
	return argc && argv ? 3 : 3;
}
int cmd_trace(int argc, char **argv)
{
	return argc && argv ? 3 : 3;
}
int cmd_fix(int argc, char **argv)
{
	return argc && argv ? 3 : 3;
}
int cmd_snapshot(int argc, char **argv)
{
	return argc && argv ? 3 : 3;
}
int cmd_irqbalance_policy(int argc, char **argv)
{
	return argc && argv ? 3 : 3;
}
