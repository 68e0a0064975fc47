/* hvdrun-agent: the agent over SSH or pipes, its stdio the launcher's. */
#include "agent_run.h"

int
main(int argc, char **argv)
{
    return agent_run(argc, argv);
}
