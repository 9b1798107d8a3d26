# libposixtrace-preload.so, the LD_PRELOAD shim, and its test programs.
# Included from the top-level Makefile.am.
