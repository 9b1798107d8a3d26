/*
 * The allowed region of Syscall User Dispatch (preload/README.md, "System
 * calls: Syscall User Dispatch"): the only code whose system calls the
 * kernel never sends to the SIGSYS handler, whatever the thread's selector
 * says. It holds the instruction that re-issues a trapped call, the
 * handler's sa_restorer (rt_sigreturn), and the stubs through which calls
 * that must run in the program's own frame (vfork, clone with CLONE_VM,
 * rt_sigreturn) are made. x86-64 only: elsewhere the mode is unavailable.
 */
#if defined(__x86_64__)
/* A function of the region (or the vfork trap): global for the C code,
 * hidden outside the shim. */
.macro STUB name
	.globl \name
	.hidden \name
	.type \name,@function
\name:
.endm
.macro STUB_END name
	.size \name, .-\name
.endm

/* clone3: the program's rdi back from the thread's data (clone3.c). */
.macro CL3_RDI
	movq shim_sud_cl3_rdi@gottpoff(%rip), %rcx
	movq %fs:(%rcx), %rdi
.endm

/* The selector BLOCK again, then on to the program's return address. */
.macro SUD_RESUME
	movq shim_sud_sel@gottpoff(%rip), %rcx
	movb $1, %fs:(%rcx)
	movq shim_sud_resume@gottpoff(%rip), %rcx
	jmp *%fs:(%rcx)
.endm

	.section .text.posixtrace_sud,"ax",@progbits
	.balign 64
	.globl shim_sud_region_start
	.hidden shim_sud_region_start
shim_sud_region_start:

/* long shim_sud_raw(long nr, long a0, long a1, long a2, long a3, long a4, long a5):
 * the system call as it is, its raw result (-4095..-1: -errno). */
STUB shim_sud_raw
	movq %rdi, %rax
	movq %rsi, %rdi
	movq %rdx, %rsi
	movq %rcx, %rdx
	movq %r8, %r10
	movq %r9, %r8
	movq 8(%rsp), %r9
	syscall
	ret
STUB_END shim_sud_raw

/* The SIGSYS handler's sa_restorer; also where a program's rt_sigreturn is
 * made once the handler has recorded it (same stack pointer as the
 * program's: its own signal frame is restored). */
STUB shim_sud_restorer
	movq $15, %rax
	syscall
	hlt
STUB_END shim_sud_restorer

/* vfork, or clone with CLONE_VM and no new stack: made with the program's
 * registers and stack; parent and child both continue at the address the
 * handler left in the thread's shim_sud_resume (the child shares it: same
 * memory, same thread pointer; it is not armed, so it never traps to
 * overwrite it). Both set the selector BLOCK again: a vfork child shares it,
 * and the shim's exec wrappers leave it ALLOW. rcx is clobbered, as by any
 * system call. */
STUB shim_sud_vm_stub
	syscall
	SUD_RESUME
STUB_END shim_sud_vm_stub

/* clone with CLONE_VM and a new stack (threads made by a raw clone): the
 * handler passed stack - 8 with the return address stored there. The child
 * (rax 0) returns through its new stack, the parent through
 * shim_sud_resume; both get rsi back as the program passed it. */
STUB shim_sud_stack_stub
	syscall
	leaq 8(%rsi), %rsi
	testq %rax, %rax
	jnz 1f
	ret
1:	SUD_RESUME
STUB_END shim_sud_stack_stub

/* clone3 with CLONE_VM and a new stack (clone3.c): rdi is the thread's
 * copy of the clone_args, whose stack ends 16 bytes lower, where the
 * program's rdi and return address are. The child pops both; the parent
 * takes them from its thread data. */
STUB shim_sud_clone3_stack_stub
	syscall
	testq %rax, %rax
	jnz 1f
	popq %rdi
	ret
1:	CL3_RDI
	SUD_RESUME
STUB_END shim_sud_clone3_stack_stub

/* clone3 with CLONE_VM and no new stack: both go on through the thread
 * data (the child shares it, as a vfork child). */
STUB shim_sud_clone3_vm_stub
	syscall
	CL3_RDI
	SUD_RESUME
STUB_END shim_sud_clone3_vm_stub

/* ---- vfork and CLONE_VM | CLONE_VFORK (vfork.c) ----
 * After the call, the parent (rax: the child's pid or -errno) and the child
 * (rax 0) each trap to the handler at shim_sud_vtrap, outside the region,
 * with rax SHIM_SUD_VTRAP_NR and the call's result in shim_sud_vret; the
 * selector is set BLOCK first (the child may have left it ALLOW). The child
 * first turns dispatch on (prctl(PR_SET_SYSCALL_USER_DISPATCH, ON, the
 * region, its thread's selector): the thread data is its parent's, the
 * thread pointer the same), saving the registers the prctl takes below
 * the red zone of whatever stack it is on; before, when the parent took
 * one (vfork.c), it gets an alternate stack of the shim's and its copy of
 * the SIGSYS action SA_ONSTACK. Signals are blocked (vfork.c) until the
 * trap gives the program's mask back; a child that could not be armed
 * puts it back itself. A child whose prctl fails
 * falls through with rax 0 and goes on unarmed, as the stub's tail says. */
.macro VF_TRAP
	movq shim_sud_vret@gottpoff(%rip), %rcx
	movq %rax, %fs:(%rcx)
	movq shim_sud_sel@gottpoff(%rip), %rcx
	movb $1, %fs:(%rcx)
	movq $0x5d5d, %rax		/* SHIM_SUD_VTRAP_NR */
	jmp shim_sud_vtrap
.endm
.macro VF_SPLIT
	testq %rax, %rax
	jnz 1f
	leaq -128(%rsp), %rsp
	pushq %rdi
	pushq %rsi
	pushq %rdx
	pushq %r10
	pushq %r8
	movq shim_sud_vtop@gottpoff(%rip), %rcx
	movq %fs:(%rcx), %rcx		/* the frame (vfork.c): ss at 0, mask at 8 */
	movq (%rcx), %rdi
	testq %rdi, %rdi
	jz 3f
	xorl %esi, %esi
	movl $131, %eax			/* sigaltstack(frame->ss, NULL) */
	syscall
	movl $31, %edi			/* rt_sigaction(SIGSYS, &shim_sud_vact, NULL, 8) */
	leaq shim_sud_vact(%rip), %rsi
	xorl %edx, %edx
	movl $8, %r10d
	movl $13, %eax
	syscall
3:	movl $157, %eax			/* prctl */
	movl $59, %edi			/* PR_SET_SYSCALL_USER_DISPATCH */
	movl $1, %esi			/* PR_SYS_DISPATCH_ON */
	leaq shim_sud_region_start(%rip), %rdx
	leaq shim_sud_region_end(%rip), %r10
	subq %rdx, %r10
	movq shim_sud_sel@gottpoff(%rip), %r8
	addq %fs:0, %r8
	syscall
	testq %rax, %rax
	jz 4f
	movl $14, %eax			/* not armed: rt_sigprocmask(SIG_SETMASK, the program's, NULL, 8) */
	movl $2, %edi
	movq shim_sud_vtop@gottpoff(%rip), %rsi
	movq %fs:(%rsi), %rsi
	addq $8, %rsi
	xorl %edx, %edx
	movl $8, %r10d
	syscall
	movl $1, %eax
4:	popq %r8
	popq %r10
	popq %rdx
	popq %rsi
	popq %rdi
	leaq 128(%rsp), %rsp
	testq %rax, %rax
	jnz 2f
1:	VF_TRAP
2:	xorl %eax, %eax
.endm

/* vfork, clone with CLONE_VM | CLONE_VFORK and no new stack */
STUB shim_sud_vfork_vm_stub
	syscall
	VF_SPLIT
	SUD_RESUME
STUB_END shim_sud_vfork_vm_stub

/* clone with CLONE_VM | CLONE_VFORK and a new stack (as shim_sud_stack_stub) */
STUB shim_sud_vfork_stack_stub
	syscall
	leaq 8(%rsi), %rsi
	VF_SPLIT
	ret
STUB_END shim_sud_vfork_stack_stub

/* clone3 with CLONE_VM | CLONE_VFORK and a new stack (as shim_sud_clone3_stack_stub) */
STUB shim_sud_vfork_cl3_stack_stub
	syscall
	VF_SPLIT
	popq %rdi
	ret
STUB_END shim_sud_vfork_cl3_stack_stub

/* clone3 with CLONE_VM | CLONE_VFORK and no new stack */
STUB shim_sud_vfork_cl3_vm_stub
	syscall
	VF_SPLIT
	CL3_RDI
	SUD_RESUME
STUB_END shim_sud_vfork_cl3_vm_stub

	.globl shim_sud_region_end
	.hidden shim_sud_region_end
shim_sud_region_end:

/* Outside the region: the vfork stubs' trap back to the handler, which
 * sets where it goes on (vfork.c). */
	.text
STUB shim_sud_vtrap
	syscall
	.globl shim_sud_vtrap_ret
	.hidden shim_sud_vtrap_ret
shim_sud_vtrap_ret:
	ud2
STUB_END shim_sud_vtrap
	.section .note.GNU-stack,"",@progbits
#endif
