# posixtrace-run and posixtrace-dump, and their test programs.
# Included from the top-level Makefile.am.
