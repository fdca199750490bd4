/* The `build-catalogue` command of the CLI (src/cli/cs_catalogue_build.c). */
#ifndef CS_CATALOGUE_BUILD_H
#define CS_CATALOGUE_BUILD_H

/* argv[0] is "build-catalogue"; returns the exit status (on success it does not return: the
 * compiler replaces the process). */
int cs_catalogue_build_main(int argc, char **argv);

#endif
