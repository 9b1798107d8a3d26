/*
 * The trace API's entry points in the system-call mode (preload/README.md,
 * "System calls"): the system calls libposixtrace makes for a program that
 * calls posix_trace_create, posix_trace_getnext_event, posix_trace_flush...
 * (the stream's memfd and mappings, the log's writes, futex waits and
 * wakes, starting its threads) are the trace system's, not the program's:
 * they must not be recorded. They are made from libc, outside any region
 * the kernel could allow, so the thread's selector says ALLOW while the
 * library runs: the shim interposes each entry point that may make a
 * system call with a gate that, in an armed thread, sets the selector
 * ALLOW, calls the library's definition, and puts the selector back (kept
 * in the gate's frame: gates nest); in a thread that is not armed it jumps
 * straight to the definition. The definitions are found with
 * dlsym(RTLD_NEXT) (shim_resolve) when the mode is turned on (arm.c,
 * resolve_gates), or at the first call of one made before it or without it.
 * x86-64 only, like the mode.
 */
#if defined(__x86_64__)

/* The selector's old value into the 8 bytes at OFF(%rsp), ALLOW (0) in it. */
.macro SEL_ALLOW off
	movq shim_sud_sel@gottpoff(%rip), %r10
	movzbl %fs:(%r10), %r10d
	movq %r10, \off(%rsp)
	movq shim_sud_sel@gottpoff(%rip), %r10
	movb $0, %fs:(%r10)
.endm
.macro SEL_RESTORE off
	movq shim_sud_sel@gottpoff(%rip), %r10
	movq \off(%rsp), %r11
	movb %r11b, %fs:(%r10)
.endm

/* GATE name, stack: `stack` is the number of the function's arguments
 * passed on the stack (0, or 1 for a 7-argument function). */
.macro GATE name, stack
	.section .bss.posixtrace_gate,"aw",@nobits
	.balign 8
.Lreal_\name:
	.zero 8
	.section .rodata.posixtrace_gate,"a",@progbits
.Lstr_\name:
	.asciz "\name"
	.section .data.rel.ro.posixtrace_gates,"aw",@progbits
	.quad .Lreal_\name, .Lstr_\name

	.text
	.globl \name
	.type \name,@function
\name:
	.cfi_startproc
	movq .Lreal_\name(%rip), %r11
	testq %r11, %r11
	jz 2f
1:	movq shim_sud_armed@gottpoff(%rip), %r10
	cmpb $0, %fs:(%r10)
	jne 3f
	jmp *%r11
3:
.if \stack == 0
	subq $8, %rsp
	.cfi_adjust_cfa_offset 8
	SEL_ALLOW 0
	call *%r11
	SEL_RESTORE 0
	addq $8, %rsp
	.cfi_adjust_cfa_offset -8
.else
	subq $16, %rsp
	.cfi_adjust_cfa_offset 16
	SEL_ALLOW 8
	pushq 24(%rsp)                  /* the stack argument, again above the return address */
	.cfi_adjust_cfa_offset 8
	call *%r11
	addq $8, %rsp
	.cfi_adjust_cfa_offset -8
	SEL_RESTORE 8
	addq $16, %rsp
	.cfi_adjust_cfa_offset -16
.endif
	ret
2:	/* not resolved yet: the argument registers kept across shim_resolve */
	pushq %rdi
	.cfi_adjust_cfa_offset 8
	pushq %rsi
	.cfi_adjust_cfa_offset 8
	pushq %rdx
	.cfi_adjust_cfa_offset 8
	pushq %rcx
	.cfi_adjust_cfa_offset 8
	pushq %r8
	.cfi_adjust_cfa_offset 8
	pushq %r9
	.cfi_adjust_cfa_offset 8
	pushq %rax
	.cfi_adjust_cfa_offset 8
	leaq .Lreal_\name(%rip), %rdi
	leaq .Lstr_\name(%rip), %rsi
	call shim_resolve@PLT
	movq %rax, %r11
	popq %rax
	.cfi_adjust_cfa_offset -8
	popq %r9
	.cfi_adjust_cfa_offset -8
	popq %r8
	.cfi_adjust_cfa_offset -8
	popq %rcx
	.cfi_adjust_cfa_offset -8
	popq %rdx
	.cfi_adjust_cfa_offset -8
	popq %rsi
	.cfi_adjust_cfa_offset -8
	popq %rdi
	.cfi_adjust_cfa_offset -8
	jmp 1b
	.cfi_endproc
	.size \name, .-\name
.endm

	.section .data.rel.ro.posixtrace_gates,"aw",@progbits
	.balign 8
	.globl shim_sud_gates
	.hidden shim_sud_gates
shim_sud_gates:

/* The entry points that may make a system call (not the attr_* and
 * eventset_* ones, which only touch the caller's memory). Not
 * posix_trace_event either: the hot path of a program's own events keeps
 * its direct binding (a gate cost 3 to 5 ns an event, bench_event under
 * the shim); the few system calls it can make (futex wakes and waits,
 * gettid) are libc's syscall() called from libposixtrace itself, which the
 * handler leaves unrecorded by their caller's address (handler.c). */
	GATE posix_trace_create, 0
	GATE posix_trace_create_withlog, 0
	GATE posix_trace_shutdown, 0
	GATE posix_trace_start, 0
	GATE posix_trace_stop, 0
	GATE posix_trace_clear, 0
	GATE posix_trace_flush, 0
	GATE posix_trace_getnext_event, 0
	GATE posix_trace_timedgetnext_event, 1
	GATE posix_trace_trygetnext_event, 0
	GATE posix_trace_open, 0
	GATE posix_trace_close, 0
	GATE posix_trace_rewind, 0
	GATE posix_trace_get_attr, 0
	GATE posix_trace_get_status, 0
	GATE posix_trace_get_filter, 0
	GATE posix_trace_set_filter, 0
	GATE posix_trace_eventid_open, 0
	GATE posix_trace_trid_eventid_open, 0
	GATE posix_trace_eventid_get_name, 0
	GATE posix_trace_eventtypelist_getnext_id, 0
	GATE posix_trace_eventtypelist_rewind, 0

	.section .data.rel.ro.posixtrace_gates,"aw",@progbits
	.globl shim_sud_gates_end
	.hidden shim_sud_gates_end
shim_sud_gates_end:

	.section .note.GNU-stack,"",@progbits
#endif
