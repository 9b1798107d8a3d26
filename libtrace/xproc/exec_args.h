/*
 * execl, execlp, execle: their variadic arguments into an argv array on the
 * caller's stack. Shared by libposixtrace's exec wrappers (exec.c) and the
 * shim's (preload/exec.c).
 *
 *   va_start(ap, arg);
 *   size_t n = pt_exec_count_args(arg, &ap);
 *   char *v[n + 1];
 *   pt_exec_fill_args(v, n, arg, &ap);  // ap is then past the terminating NULL:
 *   envp = va_arg(ap, char *const *);   // execle's last argument
 */
#ifndef PT_EXEC_ARGS_H
#define PT_EXEC_ARGS_H

#include <stdarg.h>
#include <stddef.h>

/* Arguments before the terminating NULL, `arg` included (0 if arg is it). */
static inline size_t pt_exec_count_args(const char *arg, va_list *ap)
{
    if (arg == NULL)
        return 0;
    size_t n = 1;
    va_list c;
    va_copy(c, *ap);
    while (va_arg(c, const char *) != NULL)
        n++;
    va_end(c);
    return n;
}

/* v[0..n-1] = the arguments, v[n] = NULL; consumes them and the terminator. */
static inline void pt_exec_fill_args(char **v, size_t n, const char *arg, va_list *ap)
{
    if (n > 0)
        v[0] = (char *)arg;
    for (size_t i = 1; i < n; i++)
        v[i] = va_arg(*ap, char *);
    if (n > 0)
        (void)va_arg(*ap, char *); /* the terminating NULL (arg itself when n == 0) */
    v[n] = NULL;
}

#endif
