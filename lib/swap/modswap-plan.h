/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What of the swap plan's making a unit test calls (not for the front end). */
#ifndef NUMASTOR_MODSWAP_PLAN_H
#define NUMASTOR_MODSWAP_PLAN_H

#include "swap/modswap.h"

/* A failed check for each two disks of p with one identity (both named): the
 * swap could not tell them apart once their driver reloads. Nothing when all differ. */
int ns_swap_check_distinct_disks(struct ns_swap_plan *p);

#endif
