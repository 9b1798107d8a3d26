/* sym_elf.c: the functions and lines of one object file, read in process
 * with elfutils' libdwfl (symbol tables, DWARF, separate debug files). */
#ifndef PT_SYM_ELF_H
#define PT_SYM_ELF_H

#include <glib.h>
#include <stddef.h>
#include <stdint.h>

struct sym_elves;
struct sym_elf;

struct sym_elves *sym_elves_new(void);
void sym_elves_free(struct sym_elves *v);
/* The object a trace names: path, and the GNU build id the trace recorded
 * (id NULL: not recorded, not checked). The file at path is used when its
 * build id is that one, else the separate debug file with that build id
 * (/usr/lib/debug/.build-id/xx/yyyy.debug), else nothing: then a message
 * says once (stderr) that the file no longer matches the trace. NULL when
 * no file can be used. */
struct sym_elf *sym_elf_get(struct sym_elves *v, const char *path, const unsigned char *id,
                            size_t idlen);
/* ET_EXEC: linked at its run-time addresses. */
int sym_elf_is_exec(const struct sym_elf *f);
/* "func (file.c:12)", with the functions inlined at vaddr innermost first
 * ("inner (a.h:3) inlined in outer (a.c:12)"), or "" when vaddr is in no
 * known function. The string belongs to f. */
const char *sym_elf_name(struct sym_elf *f, uint64_t vaddr);

#endif
