/*
 * clone3 with CLONE_VM in the system-call mode (glibc's posix_spawn, and so
 * system() and popen(): CLONE_VM | CLONE_VFORK on a stack of their own;
 * pthread_create tries it first too). Its child shares the memory, so it
 * must not start in the SIGSYS handler's frame: like clone's (handler.c),
 * the call is made by a stub of the region after the handler returned,
 * with the program's registers, and the child goes on where the program
 * made the call. The child's stack is in the clone_args the program
 * passed, which the kernel reads: the stub is given, in rdi, a copy in the
 * thread's data whose stack is 16 bytes shorter, and the 16 bytes at its
 * top hold the program's rdi and the return address, which the child pops
 * (region.S, shim_sud_clone3_stack_stub); the parent finds both in its
 * thread data. Without a new stack, parent and child both go on through
 * the thread data (a vfork-like child shares it; shim_sud_clone3_vm_stub).
 */
#include "../shim.h"
#include "sud.h"

#include <linux/sched.h>
#include <string.h>

#define CL3_MAX 128 /* clone_args bytes the copy holds (88 in Linux 5.5 to 6.x) */

__thread uint64_t shim_sud_cl3[CL3_MAX / 8] __attribute__((tls_model("initial-exec")));
__thread uintptr_t shim_sud_cl3_rdi __attribute__((tls_model("initial-exec")));

bool shim_sud_clone3_vm(const long *a, greg_t *g)
{
    struct shim_pages pg = SHIM_PAGES_INIT;
    struct clone_args ca;
    size_t size = (size_t)a[1];
    if (size < sizeof ca || size > CL3_MAX || !shim_readable(&pg, (const void *)a[0], size))
        return false;
    memcpy(shim_sud_cl3, (const void *)a[0], size);
    memcpy(&ca, shim_sud_cl3, sizeof ca);
    shim_sud_cl3_rdi = (uintptr_t)g[REG_RDI];
    shim_sud_resume = (uintptr_t)g[REG_RIP];
    void (*stub)(void) = shim_sud_clone3_vm_stub;
    if (ca.stack != 0 && ca.stack_size > 16) {
        uintptr_t *top = (uintptr_t *)(uintptr_t)(ca.stack + ca.stack_size);
        top[-2] = (uintptr_t)g[REG_RDI];
        top[-1] = (uintptr_t)g[REG_RIP];
        ca.stack_size -= 16;
        memcpy(shim_sud_cl3, &ca, sizeof ca);
        stub = shim_sud_clone3_stack_stub;
    }
    g[REG_RDI] = (greg_t)(uintptr_t)shim_sud_cl3;
    g[REG_RIP] = (greg_t)(uintptr_t)stub;
    return true;
}
