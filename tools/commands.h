/* Subcommands of the `lowconv` CLI. Each takes the arguments after its name (argv[0] is the
 * subcommand) and returns the process exit code: 0 ok, 1 run failed, 2 bad usage. */
#ifndef LC_TOOLS_COMMANDS_H
#define LC_TOOLS_COMMANDS_H

int cmd_conv(int argc, char **argv);
int cmd_gemv(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_devices(int argc, char **argv);
int cmd_tune(int argc, char **argv);
int cmd_quantize(int argc, char **argv);

#endif
