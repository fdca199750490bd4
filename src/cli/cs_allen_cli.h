/* `cablesim allen`: a model file for one Allen Cell Types cell (cs_allen_cli.c). */
#ifndef CS_ALLEN_CLI_H
#define CS_ALLEN_CLI_H

/* argv[0] is "allen"; returns the exit status. */
int cs_allen_cli_main(int argc, char **argv);

#endif
