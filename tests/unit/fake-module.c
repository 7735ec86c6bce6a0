/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Compiled to an object that stands in for a .ko: only its .modinfo section is read
 * (libkmod's kmod_module_get_info), as an nvme build would carry it. */
__attribute__((section(".modinfo"), used, aligned(1))) static const char modinfo[] =
	"name=nvme\0"
	"parm=io_queue_depth:set io queue depth, should >= 2 and < 4096\0"
	"parm=sgl_threshold:Use SGLs when average request segment size is larger or equal to this size.\0"
	"parmtype=sgl_threshold:uint\0"
	"parm=use_cmb_sqes:use controller's memory buffer for I/O SQes\0"
	"parmtype=use_cmb_sqes:bool\0"
	"parmtype=hostnqn:charp\0"
	"parmtype=queues:array of int\0"
	"parmtype=empty:array of int\0"
	"parmtype=broken:int\0"
	"parmtype=flag:bool\0"
	"numastor=nvme-no-forced-node\0";
