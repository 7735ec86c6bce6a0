/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Compiled to an object standing in for nvme.ko, whose code lib/read/module.c judges: with
 * -DPREFIX it imports node_states as the pre-fix nvme-pci does (first_memory_node is
 * first_node(node_states[N_MEMORY])), without it it does not. Its .modinfo carries the
 * srcversion numastor compares with the loaded module's.
 */
#ifdef PREFIX
extern unsigned long node_states[];
#define SRCVERSION "A1B2C3D4E5F60718293A4B5"
#else
#define SRCVERSION "0F1E2D3C4B5A69788796A5B"
#endif
extern int dma_pool_create(void);

__attribute__((section(".modinfo"), used, aligned(1))) static const char modinfo[] = "license=GPL\0"
										     "name=nvme\0"
										     "srcversion=" SRCVERSION "\0";

int nvme_probe(int node);
int nvme_probe(int node)
{
#ifdef PREFIX
	if (node == -1)
		return (int)node_states[0];
#endif
	return dma_pool_create() + node;
}
