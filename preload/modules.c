/*
 * The address map: one "module" event per loaded object (executable, shared
 * objects, vDSO) with its load bias, extent, GNU build id and path, so that
 * program addresses and stacks can be symbolized after the process is gone.
 *
 * The whole map is recorded at shim initialisation (process start), and
 * again before the first recorded call after it (shim_begin: before the
 * call's event, outside its duration) whenever the map may have changed or
 * was not taken by any stream: at start-up when no stream was running yet,
 * and after each dlopen. dlopen is not wrapped by a C function,
 * which would make the shim the caller that glibc uses to find the RPATH,
 * RUNPATH and namespace for the new object: on x86-64 an assembly stub marks
 * the map as changed and jumps to the real dlopen.
 */
#include "shim.h"

#include <elf.h>
#include <link.h>
#include <string.h>
#include <unistd.h>

volatile int shim_map_pending = 1;
static _Atomic int reporting;
static char exe_path[1024];

const char *shim_exe_path(void)
{
    if (exe_path[0] == '\0') {
        ssize_t n = readlink("/proc/self/exe", exe_path, sizeof exe_path - 1);
        exe_path[n > 0 ? n : 0] = '\0';
    }
    return exe_path;
}

/* The NT_GNU_BUILD_ID note of one object, or NULL. */
static const unsigned char *build_id(const struct dl_phdr_info *info, uint32_t *len)
{
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE)
            continue;
        const unsigned char *p = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);
        const unsigned char *end = p + ph->p_memsz;
        while (p + sizeof(ElfW(Nhdr)) <= end) {
            const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
            const unsigned char *name = p + sizeof *nh;
            const unsigned char *desc = name + ((nh->n_namesz + 3) & ~3u);
            if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
                memcmp(name, "GNU", 4) == 0 && desc + nh->n_descsz <= end) {
                *len = nh->n_descsz;
                return desc;
            }
            p = desc + ((nh->n_descsz + 3) & ~3u);
        }
    }
    return NULL;
}

static int report_one(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    (void)data;
    uintptr_t end = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && ph->p_vaddr + ph->p_memsz > end)
            end = ph->p_vaddr + ph->p_memsz;
    }
    struct shim_call c;
    shim_begin(&c, POSIXTRACE_EV_MODULE, NULL);
    shim_fix_module(&c, info->dlpi_addr, end);
    uint32_t idlen = 0;
    const unsigned char *id = build_id(info, &idlen);
    if (id != NULL)
        shim_var(&c, id, idlen, 64);
    else
        shim_nodata(&c);
    const char *name = info->dlpi_name;
    shim_str(&c, name != NULL && name[0] != '\0' ? name : shim_exe_path());
    shim_record(&c);
    return 0;
}

void shim_report_modules(void)
{
    int zero = 0;
    if (!__atomic_compare_exchange_n(&reporting, &zero, 1, false, __ATOMIC_ACQUIRE,
                                     __ATOMIC_RELAXED))
        return; /* another thread is at it */
    int saved = errno;
    shim_map_pending = 0;
    dl_iterate_phdr(report_one, NULL);
    __atomic_store_n(&reporting, 0, __ATOMIC_RELEASE);
    errno = saved;
}

#if defined(__x86_64__)
static void *real_dlopen;

__attribute__((used)) void *shim_dlopen_pre(void)
{
    shim_map_pending = 1;
    return shim_get(&real_dlopen, "dlopen");
}

/* dlopen(file, mode): keep rdi and rsi, call the hook, jump to dlopen. */
__asm__(".text\n"
        ".globl dlopen\n"
        ".type dlopen,@function\n"
        "dlopen:\n"
        ".cfi_startproc\n"
        "  pushq %rdi\n"
        ".cfi_adjust_cfa_offset 8\n"
        "  pushq %rsi\n"
        ".cfi_adjust_cfa_offset 8\n"
        "  subq $8, %rsp\n"
        ".cfi_adjust_cfa_offset 8\n"
        "  call shim_dlopen_pre\n"
        "  addq $8, %rsp\n"
        ".cfi_adjust_cfa_offset -8\n"
        "  popq %rsi\n"
        ".cfi_adjust_cfa_offset -8\n"
        "  popq %rdi\n"
        ".cfi_adjust_cfa_offset -8\n"
        "  jmp *%rax\n"
        ".cfi_endproc\n"
        ".size dlopen, .-dlopen\n");
#endif
