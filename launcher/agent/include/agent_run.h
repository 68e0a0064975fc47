/* The agent of one host (ARCHITECTURE.md, "Launcher and agent"): reads
 * its brief on stdin, chooses the network with hvdd (through the
 * launcher), runs its workers, and returns its host's exit code. Two
 * programs run it: hvdrun-agent (over SSH or pipes, agent_main.c) and
 * hvdrun-srun-agent (on a node of an srun step, once its connections back
 * to hvdrun stand as its stdio). */
#ifndef HVD_AGENT_RUN_H
#define HVD_AGENT_RUN_H

/* argv[1] "--check": return 0 at once (hvdrun --check-ssh). */
int agent_run(int argc, char **argv);

#endif
